//! One call of a chat API (Chat Completions, Responses, Messages, Gemini), from body
//! bytes to the planned reply, in stages: read it (errors in the API's envelope), see
//! who asks and check their conversation, admit it past the provider's quotas and the
//! failures drawn for it, take a generation slot, decide the reply (with what the prompt
//! cache held of it) and plan its timing.
//! Sending it is `deliver.rs`'s; every API-specific byte is its dialect's.
//!
//! The reply's RNG is seeded from the scenario seed and what the conversation says;
//! failures draw from their own RNG, seeded by the conversation and the attempt, so a
//! retry can succeed and replies never depend on failure settings.

use crate::failures::rates::{Draw, Failures, Injected};
use crate::failures::script as fail_script;
use crate::hash::{content_hash, fnv1a};
use crate::integrity::{oracle, reasoning};
use crate::provider::model::{ModelSpec, ReasoningMode};
use crate::provider::timing::Schedule;
use crate::provider::{replay, reply, thoughts};
use crate::pushback::state::{Held, Scopes};
use crate::serve::app::App;
use crate::serve::body::read_body;
use crate::serve::deliver::{self, Plan};
use crate::serve::errors::{early, over_quota, queue_full, refuse};
use crate::serve::headers::{header, key_of};
use crate::serve::prompt_cache;
use crate::serve::stats::charged;
use crate::session::{self, Session};
use axum::body::Body;
use axum::http::HeaderMap;
use axum::response::Response;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use wire::{Api, Reply, Request, StreamRenderer, UrlCall, WireError};

/// What a call's URL says besides its API, for an API that names the model in the path:
/// the path after `models/`, and the query.
pub struct Target {
    pub tail: String,
    pub query: Option<String>,
}

/// One call of `api`: what its router line hands over.
pub async fn handle(
    app: Arc<App>,
    api: Api,
    target: Option<Target>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let url = match target.map(|t| api.dialect().url_call(&t.tail, t.query.as_deref())) {
        Some(Err(r)) => return refuse(&app, api, &r.error, r.request_id),
        Some(Ok(url)) => url,
        None => None,
    };
    app.stats.requests.fetch_add(1, Relaxed);
    let bytes = match read_body(&app, &headers, body).await {
        Ok(b) => b,
        Err(e) => return refuse(&app, api, &e, "req_unread"),
    };
    // The provider's clock starts when the whole request is in: a client that sends its
    // headers and body apart (a CPU-starved SUT does) must not make the mock look late.
    let start = Instant::now();
    let call = Call {
        app: &app,
        api,
        headers: &headers,
        request_id: format!("req_{:016x}", fnv1a(app.seed, &bytes)),
    };
    match call.answer(&bytes, url, start).await {
        Ok((plan, cut_at, true)) => deliver::stream(plan, cut_at),
        Ok((plan, _, false)) => deliver::whole(plan).await,
        Err(refused) => *refused,
    }
}

/// The answer that refuses a call at some stage (boxed: a response is large, and only
/// the refusals carry one through the stages).
type Refusal = Box<Response>;

/// One call in progress: what every stage reads.
struct Call<'a> {
    app: &'a Arc<App>,
    api: Api,
    headers: &'a HeaderMap,
    request_id: String,
}

/// Who asks, and what the ledger learnt of the request on arrival.
struct Seen {
    session: Session,
    /// What the conversation says, hashed: the reply's seed.
    hash: u64,
    /// How many times this conversation was sent before.
    attempt: u32,
    /// The run's key for the seals on reasoning.
    seal_key: u64,
}

/// What the provider let through: the scopes and key whose quotas were taken, and the
/// failures drawn for the request that spoil it while it is sent.
struct Admitted<'r> {
    scopes: Scopes<'r>,
    key: String,
    failures: Failures,
    draw: Draw,
    /// The failures' own RNG, for where a stall or a cut falls.
    frng: ChaCha8Rng,
    /// A scripted cut: after this many output tokens.
    cut_token: Option<u32>,
}

/// The generation slots taken, how much slower they generate, and when the reply's
/// clock starts.
struct Slot {
    held: Held,
    slowdown: f64,
    start: Instant,
}

impl<'a> Call<'a> {
    fn refuse(&self, e: &WireError) -> Refusal {
        Box::new(refuse(self.app, self.api, e, &self.request_id))
    }

    /// Every stage in turn: the reply planned (with an injected cut, and whether to
    /// stream it), or the answer that refuses the call.
    async fn answer(
        &self,
        bytes: &[u8],
        url: Option<UrlCall>,
        start: Instant,
    ) -> Result<(Plan, Option<usize>, bool), Refusal> {
        let (req, spec) = self.read(bytes, url)?;
        let seen = charged(&self.app.stats.oracle_cpu_ns, || self.inspect(&req, &spec))?;
        let admitted = self.admit(&req, &spec, &seen)?;
        let slot = self.take_slot(&admitted.scopes, &seen, start).await?;
        let (plan, cut_at) = self.plan(&req, &spec, &seen, admitted, slot);
        Ok((plan, cut_at, req.stream))
    }

    /// The request read: the headers the API requires, its body, what its URL says, the
    /// stored conversation it goes on from, and its model's spec.
    fn read(
        &self,
        bytes: &[u8],
        url: Option<UrlCall>,
    ) -> Result<(Request, Cow<'a, ModelSpec>), Refusal> {
        if let Some((name, example)) = self.api.dialect().required_header() {
            if !self.headers.contains_key(name) {
                let e =
                    WireError::invalid(name, format!("header is required (for example {example})"));
                return Err(self.refuse(&e));
            }
        }
        let mut req = self.api.parse(bytes).map_err(|e| self.refuse(&e))?;
        if let Some(url) = url {
            req.model = url.model;
            req.stream = url.stream;
        }
        self.app
            .chains
            .continue_from(&mut req)
            .map_err(|e| self.refuse(&e))?;
        let app: &'a App = self.app;
        match app.scenario.model(&req.model) {
            Some(spec) => Ok((req, spec)),
            None => Err(self.refuse(&app.unknown_model(&req.model))),
        }
    }

    /// Who asks; the ledger counts the call and the oracle checks its conversation.
    /// Reasoning sent back dropped, moved or altered gets the API's own 400.
    fn inspect(&self, req: &Request, spec: &ModelSpec) -> Result<Seen, Refusal> {
        let app = self.app;
        let session = session::identify(
            req,
            header(self.headers, "x-plimsoll-session"),
            header(self.headers, "x-plimsoll-nonce"),
        );
        let hash = content_hash(app.seed, req);
        let arrival = app.ledger.arrive(session.key(), hash, req.prompt_tokens);
        let found = oracle::check(req, &session, spec, app.scenario.integrity, &app.ledger);
        app.ledger.record(found);
        app.ledger
            .record(crate::integrity::mcp::check(req, &session, &app.mcp));
        let seal_key = thoughts::key(app.seed);
        if spec.reasoning.mode != ReasoningMode::Off {
            if let Some(r) =
                reasoning::check(req, session.key(), seal_key, |id| app.chains.stored(id))
            {
                if app.scenario.integrity.reasoning {
                    app.ledger.record(vec![r.violation]);
                }
                return Err(self.refuse(&r.error));
            }
        }
        Ok(Seen {
            session,
            hash,
            attempt: arrival.attempt,
            seal_key,
        })
    }

    /// The provider's quotas (a request over one is refused before anything else), then
    /// the failures drawn for this attempt: an early one answers instead of the model.
    fn admit<'r>(
        &self,
        req: &'r Request,
        spec: &ModelSpec,
        seen: &Seen,
    ) -> Result<Admitted<'r>, Refusal> {
        let app = self.app;
        let scopes = app
            .pushback
            .scopes(app.scenario.provider, &req.model, spec.limits);
        let key = if scopes.is_empty() {
            String::new()
        } else {
            key_of(self.headers)
        };
        let now = std::time::Instant::now();
        if let Err(r) = app.pushback.admit(&scopes, &key, req.prompt_tokens, now) {
            app.ledger.refused(seen.session.key());
            app.stats.errors.fetch_add(1, Relaxed);
            return Err(Box::new(over_quota(
                self.api,
                &req.model,
                &r,
                &self.request_id,
            )));
        }
        let failures = app.failures_for(&req.model, spec);
        let mut frng = ChaCha8Rng::seed_from_u64(fnv1a(seen.hash, &seen.attempt.to_le_bytes()));
        let mut draw = failures.draw(&mut frng);
        // A failure script decides instead of the draw when one of its rules applies.
        let mut cut_token = None;
        if !spec.fail.is_empty() {
            let nth = app.nth_call(&req.model);
            if let Some(rule) = fail_script::scripted(&spec.fail, seen.attempt, nth) {
                draw = Draw {
                    early: (rule.with != Injected::Cut).then_some(rule.with),
                    cut: rule.with == Injected::Cut,
                    ..Default::default()
                };
                cut_token = rule.at_token;
            }
        }
        let early_kind = draw
            .early
            .or((draw.cut && !req.stream).then_some(Injected::Reset));
        if let Some(kind) = early_kind {
            app.ledger.injected(seen.session.key(), kind);
            app.stats.errors.fetch_add(1, Relaxed);
            return Err(Box::new(early(self.api, kind, &failures, &self.request_id)));
        }
        Ok(Admitted {
            scopes,
            key,
            failures,
            draw,
            frng,
            cut_token,
        })
    }

    /// A generation slot in every scope with capacity: the wait counts in the time to
    /// first token (the reply's clock starts once it has its slots).
    async fn take_slot(
        &self,
        scopes: &Scopes<'_>,
        seen: &Seen,
        start: Instant,
    ) -> Result<Slot, Refusal> {
        let app = self.app;
        let (held, slowdown, waited) = match app.pushback.enter(scopes).await {
            Ok(x) => x,
            Err(full) => {
                app.ledger.refused(seen.session.key());
                app.stats.errors.fetch_add(1, Relaxed);
                return Err(Box::new(queue_full(self.api, &full, &self.request_id)));
            }
        };
        let start = if !held.gated() {
            start
        } else {
            app.ledger
                .queued(seen.session.key(), waited.as_secs_f64() * 1000.0);
            Instant::now()
        };
        Ok(Slot {
            held,
            slowdown,
            start,
        })
    }

    /// The reply decided and told to the ledger, its output tokens taken from the quotas,
    /// and its timing planned (late failures included); the frame of an injected cut.
    fn plan(
        &self,
        req: &Request,
        spec: &ModelSpec,
        seen: &Seen,
        mut adm: Admitted,
        slot: Slot,
    ) -> (Plan, Option<usize>) {
        let app = self.app;
        let mut rng = ChaCha8Rng::seed_from_u64(seen.hash);
        let id = format!("{:016x}", fnv1a(seen.hash, b"id"));
        let created = app.created_unix();
        let replayed = app.replay.as_ref().and_then(|r| {
            let ask = replay::Ask {
                req,
                spec,
                session: &seen.session,
                id: &id,
                created,
            };
            r.answer(ask, &mut rng)
        });
        let mut reply = match replayed {
            Some(r) => r,
            None => reply::decide(
                req,
                spec,
                &seen.session,
                id,
                created,
                seen.seal_key,
                &mut rng,
            ),
        };
        let cached = charged(&app.stats.cache_cpu_ns, || {
            prompt_cache::account(app, self.api, req, spec, &seen.session, self.headers)
        });
        reply.cache = cached.usage;
        record_said(app, seen.session.key(), &reply);
        app.chains.keep(req, &reply);
        let output = reply.output_tokens;
        let now = std::time::Instant::now();
        let readings = app
            .pushback
            .spend_output(&adm.scopes, &adm.key, output, now);
        app.pushback.answered();
        let renderer =
            StreamRenderer::new(self.api, reply, req.include_usage, spec.tokens_per_chunk);
        let mut schedule = Schedule::new(spec);
        schedule.prefill(cached.uncached(req.prompt_tokens), spec.prefill_ms_per_1k);
        let cut_at = self.spoil(req, seen, &mut adm, &mut schedule, &renderer);
        let first = self.record_times(seen.session.key(), &schedule, &rng, &renderer);
        prompt_cache::record(app, seen.session.key(), &cached, renderer.reply(), first);
        // A busy provider generates slower: that, like the wait for a slot, is load's
        // doing, so it stays out of the unloaded time the session is measured against.
        schedule.slow_tokens(slot.slowdown);
        let plan = Plan {
            app: self.app.clone(),
            api: self.api,
            request_id: self.request_id.clone(),
            renderer,
            schedule,
            rng,
            start: slot.start,
            session: seen.session.key().to_string(),
            readings,
            held: slot.held,
        };
        (plan, cut_at)
    }

    /// The late failures drawn for the reply: a spike before its first token, a stall
    /// before one of its chunks, a cut (streams only) before one of its frames.
    fn spoil(
        &self,
        req: &Request,
        seen: &Seen,
        adm: &mut Admitted,
        schedule: &mut Schedule,
        renderer: &StreamRenderer,
    ) -> Option<usize> {
        let (ledger, session) = (&self.app.ledger, seen.session.key());
        let n = renderer.chunks().len();
        if adm.draw.spike {
            ledger.injected(session, Injected::Spike);
            schedule.spike(adm.failures.spike_ms);
        }
        if adm.draw.stall {
            ledger.injected(session, Injected::Stall);
            schedule.stall_before(adm.frng.gen_range(0..n.max(1)), adm.failures.stall_ms);
        }
        (adm.draw.cut && req.stream).then(|| {
            ledger.injected(session, Injected::Cut);
            match adm.cut_token {
                Some(k) => after_tokens(renderer.chunks(), k),
                None if n > 1 => adm.frng.gen_range(1..n),
                None => 0,
            }
        })
    }

    /// Tells the ledger the whole scheduled generation time, and for a reply that
    /// reasoned when its first token and the first token of its answer were due (what a
    /// user of a reasoning model waits for); answers when the first token was due. Drawn
    /// on copies so the stream's own draws are untouched.
    fn record_times(
        &self,
        session: &str,
        schedule: &Schedule,
        rng: &ChaCha8Rng,
        renderer: &StreamRenderer,
    ) -> f64 {
        let (mut sched, mut r2) = (schedule.clone(), rng.clone());
        let (mut total, mut first, mut answer) = (Duration::ZERO, None, None);
        for c in renderer.chunks() {
            total = sched.next(c.tokens as u32, c.thinking, &mut r2);
            first.get_or_insert(total);
            if !c.thinking {
                answer.get_or_insert(total);
            }
        }
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let ledger = &self.app.ledger;
        ledger.llm_time(session, ms(total));
        let first = ms(first.unwrap_or(total));
        let reasoned = renderer.reply().reasoning_tokens;
        if reasoned > 0 {
            ledger.reasoned(session, reasoned, first, ms(answer.unwrap_or(total)));
        }
        first
    }
}

/// The first frame after `k` output tokens have been sent: where a scripted cut falls.
fn after_tokens(chunks: &[wire::Chunk], k: u32) -> usize {
    let mut sent = 0u32;
    for (i, c) in chunks.iter().enumerate() {
        if sent >= k && c.tokens > 0 {
            return i;
        }
        sent += c.tokens as u32;
    }
    chunks.len()
}

/// Tells the ledger what the mock answered, and counts tokens.
pub(crate) fn record_said(app: &App, session: &str, reply: &Reply) {
    app.stats
        .prompt_tokens
        .fetch_add(reply.prompt_tokens as u64, Relaxed);
    app.stats
        .output_tokens
        .fetch_add(reply.output_tokens as u64, Relaxed);
    let mut calls = Vec::new();
    let mut text = None;
    for p in &reply.parts {
        match p {
            wire::Part::ToolCall(c) => calls.push((c.id.clone(), c.arguments.clone())),
            wire::Part::Text(t) => text = Some(t.as_str()),
            wire::Part::Thinking { .. } | wire::Part::Hidden { .. } => {}
        }
    }
    app.ledger.said(session, &calls, text, reply.output_tokens);
    app.mcp.note_calls(
        session,
        reply.parts.iter().filter_map(|p| match p {
            wire::Part::ToolCall(c) => Some((c.name.as_str(), c.arguments.as_str())),
            _ => None,
        }),
    );
}
