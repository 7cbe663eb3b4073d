//! One Realtime response: the conversation as one request of the session's model,
//! checked by the oracle and answered as a chat call is (the scenario's tool choreography,
//! the ledger told what was said); then spoken — the words as audio in the session's
//! output format, in deltas paced faster than they play after the model's time to first
//! token, the transcript alongside — or written, or calls made; and `response.done` with
//! the usage the API reports.

use crate::serve::app::App;
use crate::serve::audio::said;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use wire::audio::realtime::server::{Events, Out, Usage};
use wire::audio::realtime::{items, Content, Item, Session};
use wire::{Part, Role};

/// What a response needs, taken from its connection.
pub(crate) struct Job {
    pub app: Arc<App>,
    pub session: Session,
    pub items: Vec<Item>,
    pub response_id: String,
    /// Ids for its message item and its function-call items.
    pub item_ids: (String, String),
    pub events: Arc<Mutex<Events>>,
    pub out: mpsc::UnboundedSender<String>,
    pub who: Option<String>,
    pub heard_s: f64,
    /// Set by whoever sends the response's `response.done` first: the response itself,
    /// or a cancel (never both).
    pub ended: Arc<std::sync::atomic::AtomicBool>,
}

/// What a response tells its connection: its output, once decided (its end the
/// connection reads from `Job::ended`).
pub(crate) struct Update {
    pub output: Vec<Item>,
    pub who: Option<String>,
}

impl Job {
    fn send(&self, f: impl FnOnce(&mut Events) -> String) {
        let e = f(&mut self.events.lock().unwrap_or_else(|p| p.into_inner()));
        let _ = self.out.send(e);
    }
}

pub(crate) async fn run(job: Job, from: Instant, tell: mpsc::UnboundedSender<Update>) {
    let id = job.response_id.clone();
    job.send(|ev| ev.response_created(&id, &job.session));
    let decided = match decide(&job) {
        Ok(d) => d,
        Err(e) => {
            job.send(|ev| ev.error(&e, None));
            if !job.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
                job.send(|ev| ev.response_done(&id, &job.session, &[], None, Usage::default()));
            }
            return;
        }
    };
    let output = decided.items(&job);
    let _ = tell.send(Update {
        output: output.clone(),
        who: Some(decided.session.clone()),
    });
    let mut usage = Usage {
        input_text: decided.prompt_tokens,
        input_audio: wire::audio::audio_tokens(job.heard_s, wire::audio::INPUT_AUDIO_TOKENS_PER_S),
        output_text: decided.output_tokens,
        output_audio: 0,
    };
    for (i, item) in output.iter().enumerate() {
        let out = Out {
            response_id: id.clone(),
            item_id: item.id().to_string(),
            output_index: i as u32,
        };
        job.send(|ev| ev.output_item("response.output_item.added", &out, item, "in_progress"));
        match item {
            Item::Message { .. } => {
                let spoken = say(&job, &out, &decided, from).await;
                usage.output_audio +=
                    wire::audio::audio_tokens(spoken, wire::audio::OUTPUT_AUDIO_TOKENS_PER_S);
            }
            Item::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                // A call comes after the model's time to first token, as text does.
                let due = from + Duration::from_secs_f64(decided.ttft_ms / 1000.0);
                tokio::time::sleep_until(due).await;
                job.send(|ev| ev.arguments_delta(&out, call_id, arguments));
                job.send(|ev| ev.arguments_done(&out, call_id, name, arguments));
            }
            Item::FunctionCallOutput { .. } => {}
        }
        job.send(|ev| ev.output_item("response.output_item.done", &out, item, "completed"));
    }
    if !job.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
        job.send(|ev| ev.response_done(&id, &job.session, &output, None, usage));
    }
}

/// The reply decided for the conversation so far.
struct Decided {
    session: String,
    text: String,
    calls: Vec<wire::ToolCall>,
    prompt_tokens: u32,
    output_tokens: u32,
    ttft_ms: f64,
}

impl Decided {
    /// The response's output items: the spoken (or written) message, then the calls.
    fn items(&self, job: &Job) -> Vec<Item> {
        let mut out = Vec::new();
        if !self.text.is_empty() || self.calls.is_empty() {
            let content = match job.session.audio_out {
                true => Content::Audio {
                    transcript: Some(self.text.clone()),
                },
                false => Content::Text(self.text.clone()),
            };
            out.push(Item::Message {
                id: job.item_ids.0.clone(),
                role: Role::Assistant,
                content: vec![content],
            });
        }
        for (k, c) in self.calls.iter().enumerate() {
            out.push(Item::FunctionCall {
                id: format!("{}_{k}", job.item_ids.1),
                call_id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
            });
        }
        out
    }
}

/// The reply to the conversation: who asks, the oracle's check, the scenario's answer,
/// the ledger told.
fn decide(job: &Job) -> Result<Decided, wire::WireError> {
    let app = &job.app;
    let req = items::conversation(&job.session, &job.items, true)?;
    let spec = app
        .scenario
        .model(&req.model)
        .ok_or_else(|| app.unknown_model(&req.model))?;
    let session = crate::session::identify(&req, job.who.as_deref(), None);
    let hash = crate::hash::content_hash(app.seed, &req);
    app.ledger.arrive(session.key(), hash, req.prompt_tokens);
    let found =
        crate::integrity::oracle::check(&req, &session, &spec, app.scenario.integrity, &app.ledger);
    app.ledger.record(found);
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(hash);
    let rid = format!("{:016x}", crate::hash::fnv1a(hash, b"id"));
    let seal = crate::provider::thoughts::key(app.seed);
    let reply = crate::provider::reply::decide(
        &req,
        &spec,
        &session,
        rid,
        app.created_unix(),
        seal,
        &mut rng,
    );
    crate::serve::call::record_said(app, session.key(), &reply);
    let mut text = String::new();
    let mut calls = Vec::new();
    for p in &reply.parts {
        match p {
            Part::Text(t) => text.push_str(t),
            Part::ToolCall(c) => calls.push(c.clone()),
            _ => {}
        }
    }
    app.ledger.llm_time(
        session.key(),
        spec.ttft_ms + spec.tok_ms * reply.output_tokens as f64,
    );
    Ok(Decided {
        session: session.key().to_string(),
        text,
        calls,
        prompt_tokens: req.prompt_tokens,
        output_tokens: reply.output_tokens,
        ttft_ms: spec.ttft_ms,
    })
}

/// The message said: as audio with its transcript (paced like speech) or as text. The
/// seconds of audio spoken.
async fn say(job: &Job, out: &Out, d: &Decided, from: Instant) -> f64 {
    let set = job.app.scenario.audio;
    job.send(|ev| {
        ev.content_part(
            "response.content_part.added",
            out,
            job.session.audio_out,
            "",
        )
    });
    if !job.session.audio_out {
        tokio::time::sleep_until(from + Duration::from_secs_f64(d.ttft_ms / 1000.0)).await;
        job.send(|ev| ev.delta("response.output_text.delta", out, &d.text));
        job.send(|ev| ev.part_done("response.output_text.done", out, Some(("text", &d.text))));
        job.send(|ev| ev.content_part("response.content_part.done", out, false, &d.text));
        return 0.0;
    }
    let fmt = job.session.output_format;
    let (text, seconds) = (&d.text, set.seconds_of(&d.text));
    let bytes = crate::serve::audio::spoken(&job.app, text, seconds, fmt)
        .await
        .unwrap_or_default();
    job.app.ledger.aloud.said(&d.session, text);
    let chunks: Vec<&[u8]> = bytes.chunks(said::chunk_bytes(fmt, set.chunk_ms)).collect();
    let words: Vec<&str> = d.text.split_inclusive(' ').collect();
    let (mut said_words, n) = (0, chunks.len().max(1));
    let b64 = base64::engine::general_purpose::STANDARD;
    for (i, c) in chunks.iter().enumerate() {
        let due = from
            + Duration::from_secs_f64(
                (d.ttft_ms + i as f64 * set.chunk_ms / set.tts_speed) / 1000.0,
            );
        tokio::time::sleep_until(due).await;
        let now = Instant::now();
        job.app
            .stats
            .record_audio_late(now.saturating_duration_since(due));
        if i == 0 {
            let ms = now.duration_since(from).as_secs_f64() * 1000.0;
            job.app.ledger.voice(&d.session, |v| {
                v.realtime_responses += 1;
                v.realtime_response_ms += ms;
            });
        }
        // The transcript keeps pace with the audio.
        let upto = (words.len() * (i + 1)).div_ceil(n);
        if upto > said_words {
            let piece: String = words[said_words..upto].concat();
            said_words = upto;
            job.send(|ev| ev.delta("response.output_audio_transcript.delta", out, &piece));
        }
        let delta = base64::Engine::encode(&b64, c);
        job.send(|ev| ev.delta("response.output_audio.delta", out, &delta));
    }
    let spoken = said::seconds_of(bytes.len(), fmt);
    job.app.ledger.voice(&d.session, |v| v.spoken_s += spoken);
    job.send(|ev| ev.part_done("response.output_audio.done", out, None));
    job.send(|ev| {
        ev.part_done(
            "response.output_audio_transcript.done",
            out,
            Some(("transcript", &d.text)),
        )
    });
    job.send(|ev| ev.content_part("response.content_part.done", out, true, &d.text));
    spoken
}
