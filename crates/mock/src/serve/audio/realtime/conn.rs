//! One Realtime connection: a writer task owns the socket's sending half and takes every
//! event from a channel; this loop reads the client's events (and the end of a running
//! response) and acts on them — the session updated, audio appended and its speech edges
//! told, a turn committed and heard, items added, responses started and cancelled.

use super::respond::{self, Job, Update};
use super::turn::{hear, Input};
use crate::serve::app::App;
use axum::extract::ws::{Message, WebSocket};
use futures_util::{SinkExt, StreamExt};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use voice::vad::Edge;
use wire::audio::realtime::server::Events;
use wire::audio::realtime::{client, ClientEvent, Content, Item, Session};
use wire::{Role, WireError};

/// A client gone quiet this long is closed (the API closes idle sessions too).
pub const IDLE_S: u64 = 600;

/// The latest response: its id, its task, and whether it has said its end.
struct Running {
    id: String,
    task: tokio::task::JoinHandle<()>,
    ended: Arc<std::sync::atomic::AtomicBool>,
}

impl Running {
    /// Over once its `response.done` is sent (by itself or a cancel), whether or not its
    /// task has returned: the client may start the next response the moment it reads it.
    fn is_over(&self) -> bool {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }
}

pub(crate) struct Conn {
    pub app: Arc<App>,
    pub session: Session,
    pub events: Arc<Mutex<Events>>,
    pub out: mpsc::UnboundedSender<String>,
    items: Vec<Item>,
    input: Input,
    running: Option<Running>,
    next_id: u64,
    /// The ledger's name for the caller, once a marker or the header said it.
    pub who: Option<String>,
    /// Seconds of the caller's audio heard over the connection.
    pub heard_s: f64,
}

impl Conn {
    fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!(
            "{prefix}_{:08x}{:06}",
            crate::hash::fnv1a(0, self.session.id.as_bytes()) as u32,
            self.next_id
        )
    }

    pub fn send(&self, f: impl FnOnce(&mut Events) -> String) {
        let e = f(&mut self.events.lock().unwrap_or_else(|p| p.into_inner()));
        let _ = self.out.send(e);
    }

    fn error(&self, e: &WireError, answering: Option<&str>) {
        self.send(|ev| ev.error(e, answering));
    }
}

pub(crate) async fn run(app: Arc<App>, socket: WebSocket, model: String, who: Option<String>) {
    let (mut sink, mut stream) = socket.split();
    let (out, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if sink.send(Message::Text(e.into())).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let n = app
        .stats
        .requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let session = Session::new(
        format!(
            "sess_{:016x}",
            crate::hash::fnv1a(app.seed, &n.to_le_bytes())
        ),
        model,
    );
    let mut c = Conn {
        input: Input::new(&session),
        app,
        session,
        events: Arc::new(Mutex::new(Events::default())),
        out,
        items: Vec::new(),
        running: None,
        next_id: 0,
        who,
        heard_s: 0.0,
    };
    let expires = c.app.created_unix() + 1800;
    c.send(|ev| ev.session("session.created", &c.session, expires));
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Update>();
    loop {
        tokio::select! {
            msg = tokio::time::timeout(Duration::from_secs(IDLE_S), stream.next()) => {
                // What the responses told is taken first: a client answering a
                // `response.done` it has read acts on a conversation that holds its output.
                while let Ok(u) = done_rx.try_recv() {
                    c.update(u);
                }
                match msg {
                    Ok(Some(Ok(Message::Text(t)))) => c.client_event(t.as_str(), &done_tx).await,
                    Ok(Some(Ok(Message::Binary(_)))) => c.error(&WireError::invalid("message", "binary frames are not read: send each client event as a JSON text message"), None),
                    Ok(Some(Ok(Message::Close(_)))) | Ok(Some(Err(_))) | Ok(None) | Err(_) => break,
                    Ok(Some(Ok(_))) => {}
                }
            }
            Some(u) = done_rx.recv() => c.update(u),
        }
    }
    if let Some(r) = c.running.take() {
        r.task.abort();
    }
    drop(c);
    let _ = writer.await;
}

impl Conn {
    /// One client event, read and acted on (an unreadable one answered with an error).
    async fn client_event(&mut self, text: &str, done: &mpsc::UnboundedSender<Update>) {
        let ev = match client::parse(text) {
            Ok(ev) => ev,
            Err(u) => return self.error(&u.error, u.event_id.as_deref()),
        };
        match ev {
            ClientEvent::SessionUpdate(s) => match self.session.update(&s) {
                Ok(()) => {
                    self.input.configure(&self.session);
                    let expires = self.app.created_unix() + 1800;
                    self.send(|ev| ev.session("session.updated", &self.session, expires));
                }
                Err(e) => self.error(&e, None),
            },
            ClientEvent::Append(bytes) => {
                let edges = self.input.append(&bytes, self.session.input_format);
                for e in edges {
                    self.edge(e, done).await;
                }
            }
            ClientEvent::Commit => self.commit(None, false, done).await,
            ClientEvent::Clear => {
                self.input.clear();
                self.send(Events::cleared);
            }
            ClientEvent::ItemCreate { item, previous } => self.add_item(item, previous),
            ClientEvent::ItemTruncate {
                item_id,
                audio_end_ms,
            } => {
                self.send(|ev| ev.item_truncated(&item_id, audio_end_ms));
            }
            ClientEvent::ItemDelete(id) => {
                self.items.retain(|i| i.id() != id);
                self.send(|ev| ev.item_deleted(&id));
            }
            ClientEvent::ResponseCreate(opts) => self.respond(opts, done),
            ClientEvent::ResponseCancel => self.cancel("client_cancelled"),
        }
    }

    /// A speech edge the server VAD found.
    async fn edge(&mut self, e: Edge, done: &mpsc::UnboundedSender<Update>) {
        match e {
            Edge::Started(ms) => {
                let id = self.id("item");
                self.input.started_ms = Some(ms);
                self.input.item_id = Some(id.clone());
                self.send(|ev| ev.speech_started(ms, &id));
                if self
                    .session
                    .vad
                    .as_ref()
                    .is_some_and(|v| v.interrupt_response)
                {
                    self.cancel("turn_detected");
                }
            }
            Edge::Stopped(ms) => {
                let id = self
                    .input
                    .item_id
                    .clone()
                    .unwrap_or_else(|| self.id("item"));
                self.send(|ev| ev.speech_stopped(ms, &id));
                let respond = self.session.vad.as_ref().is_some_and(|v| v.create_response);
                let from = self.input.started_ms;
                self.commit(from, respond, done).await;
            }
        }
    }

    /// The input buffer committed as the caller's turn: heard, added as an item, and with
    /// `respond` answered.
    async fn commit(
        &mut self,
        from_ms: Option<u64>,
        respond: bool,
        done: &mpsc::UnboundedSender<Update>,
    ) {
        if from_ms.is_none() && self.input.buffered_ms() < 100 {
            let mut e = WireError::invalid(
                "input_audio_buffer",
                format!("Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has {:.2}ms of audio.", self.input.buffered_ms() as f64),
            );
            e.code = wire::Code::Is("input_audio_buffer_commit_empty");
            return self.error(&e, None);
        }
        let item_id = self.input.item_id.take().unwrap_or_else(|| self.id("item"));
        let (samples, rate) = self.input.take(from_ms);
        let seconds = samples.len() as f64 / rate.max(1) as f64;
        // Heard off the runtime's threads (the voice's pool): a turn's audio takes
        // milliseconds to read.
        let app = self.app.clone();
        let transcript = crate::serve::audio::off_clock(&app, move || hear(&samples, rate))
            .await
            .unwrap_or_default();
        self.heard_s += seconds;
        let speaker = crate::session::markers(&transcript)
            .into_iter()
            .next()
            .map(|m| m.session);
        if self.who.is_none() {
            self.who.clone_from(&speaker);
        }
        let key = speaker
            .or(self.who.clone())
            .unwrap_or_else(|| crate::ledger::ANONYMOUS.into());
        self.app.ledger.voice(&key, |v| {
            v.heard_s += seconds;
            v.unheard += u64::from(transcript.is_empty());
        });
        let previous = self.items.last().map(|i| i.id().to_string());
        self.send(|ev| ev.committed(&item_id, previous.as_deref()));
        let item = Item::Message {
            id: item_id.clone(),
            role: Role::User,
            content: vec![Content::Audio {
                transcript: Some(transcript.clone()),
            }],
        };
        self.add_item(item, previous);
        if self.session.transcription.is_some() {
            self.send(|ev| ev.transcription_completed(&item_id, &transcript, seconds));
        }
        if respond {
            self.respond(serde_json::Value::Null, done);
        }
    }

    fn add_item(&mut self, mut item: Item, previous: Option<String>) {
        if item.id().is_empty() {
            let id = self.id("item");
            match &mut item {
                Item::Message { id: i, .. }
                | Item::FunctionCall { id: i, .. }
                | Item::FunctionCallOutput { id: i, .. } => *i = id,
            }
        }
        let previous = previous.or_else(|| self.items.last().map(|i| i.id().to_string()));
        self.send(|ev| {
            ev.item(
                "conversation.item.added",
                &item,
                "completed",
                previous.as_deref(),
            )
        });
        self.send(|ev| {
            ev.item(
                "conversation.item.done",
                &item,
                "completed",
                previous.as_deref(),
            )
        });
        self.items.push(item);
    }

    /// A response started (one at a time: a second while one runs is an error).
    fn respond(&mut self, opts: serde_json::Value, done: &mpsc::UnboundedSender<Update>) {
        if let Some(r) = self.running.as_ref().filter(|r| !r.is_over()) {
            let mut e = WireError::invalid("response", format!("Conversation already has an active response in progress: {}. Wait until the response is finished before creating a new one.", r.id));
            e.code = wire::Code::Is("conversation_already_has_active_response");
            return self.error(&e, None);
        }
        let id = self.id("resp");
        let mut session = self.session.clone();
        if let Some(i) = opts.get("instructions").and_then(|v| v.as_str()) {
            session.instructions = i.to_string();
        }
        if let Some(m) = opts.get("output_modalities").and_then(|v| v.as_array()) {
            session.audio_out = m.iter().any(|x| x == "audio");
        }
        let job = Job {
            app: self.app.clone(),
            session,
            items: self.items.clone(),
            response_id: id.clone(),
            item_ids: (self.id("item"), self.id("item")),
            events: self.events.clone(),
            out: self.out.clone(),
            who: self.who.clone(),
            heard_s: self.heard_s,
            ended: Arc::default(),
        };
        let ended = job.ended.clone();
        let from = tokio::time::Instant::now();
        let done = done.clone();
        let task = tokio::spawn(respond::run(job, from, done));
        self.running = Some(Running { id, task, ended });
    }

    /// The running response stopped early: its task ended, `response.done` cancelled.
    fn cancel(&mut self, why: &str) {
        let Some(r) = self.running.take() else { return };
        r.task.abort();
        // A response that already said its end is not cancelled after it.
        if r.ended.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        self.send(|ev| ev.response_done(&r.id, &self.session, &[], Some(why), Default::default()));
    }

    /// A response's output, decided: it joins the conversation at once, so a response cut
    /// short by the caller keeps what it was to say.
    fn update(&mut self, u: Update) {
        if self.who.is_none() {
            self.who = u.who;
        }
        self.items.extend(u.output);
    }
}
