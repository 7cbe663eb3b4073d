//! One API call, from body bytes to the timed answer.
//!
//! Reads and validates the request (errors in the API's envelope), picks the model's
//! spec, seeds the request's RNG from the scenario seed and the request bytes,
//! decides the reply, and sends it whole after the nominal generation time or as an
//! SSE stream whose frames leave at their deadlines.

use crate::app::App;
use crate::envelope::{add_request_id, error_response};
use crate::failures::Injected;
use crate::hash::{content_hash, fnv1a};
use crate::model::ReasoningMode;
use crate::pushback::Held;
use crate::quota::{key_of, put_headers, Reading};
use crate::timing::Schedule;
use crate::{fail_script, inject, oracle, reply, session, thoughts};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use wire::{Api, ErrorKind, StreamRenderer, WireError};

/// Reads the body up to the configured limit; a larger body is refused without
/// being buffered whole.
pub(crate) async fn read_body(
    app: &App,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, WireError> {
    let limit = app.max_body_bytes;
    let too_large = || {
        WireError::new(
            ErrorKind::RequestTooLarge,
            format!("body: request exceeds the mock's limit of {limit} bytes; raise it with --max-body-mb"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let limited = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if limited || e.to_string().contains("length limit") {
            too_large()
        } else {
            WireError::invalid("body", format!("could not be read: {e}"))
        }
    })
}

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub async fn handle(app: Arc<App>, api: Api, headers: HeaderMap, body: Body) -> Response {
    serve(app, api, headers, body, None).await
}

/// Gemini `POST …/models/{model}:{action}`: the model and whether to stream come from
/// the URL (`generateContent`, or `streamGenerateContent` with `alt=sse`).
pub async fn handle_gemini(
    app: Arc<App>,
    call: &str,
    query: Option<&str>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (model, action) = call.rsplit_once(':').unwrap_or((call, ""));
    let sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
    let stream = match action {
        "generateContent" => false,
        "streamGenerateContent" if sse => true,
        "streamGenerateContent" => {
            let e = WireError::invalid(
                "alt",
                "the mock streams Gemini replies as server-sent events only: add ?alt=sse (the official SDKs do)",
            );
            return refuse(&app, Api::Gemini, &e, "req_gemini");
        }
        other => {
            let e = WireError::new(
                ErrorKind::NotFound,
                format!("models/{model}:{other} is not served by the mock; it serves :generateContent and :streamGenerateContent?alt=sse"),
            );
            return refuse(&app, Api::Gemini, &e, "req_gemini");
        }
    };
    serve(
        app,
        Api::Gemini,
        headers,
        body,
        Some((model.to_string(), stream)),
    )
    .await
}

/// One call of any API; `url` carries what Gemini puts in the URL (model, stream).
async fn serve(
    app: Arc<App>,
    api: Api,
    headers: HeaderMap,
    body: Body,
    url: Option<(String, bool)>,
) -> Response {
    app.stats.requests.fetch_add(1, Relaxed);
    let bytes = match read_body(&app, &headers, body).await {
        Ok(b) => b,
        Err(e) => return refuse(&app, api, &e, "req_unread"),
    };
    // The provider's clock starts when the whole request is in: a client that sends its
    // headers and body apart (a CPU-starved SUT does) must not make the mock look late.
    let start = Instant::now();
    let raw_hash = fnv1a(app.seed, &bytes);
    let request_id = format!("req_{raw_hash:016x}");
    if api == Api::Messages && !headers.contains_key("anthropic-version") {
        let e = WireError::invalid(
            "anthropic-version",
            "header is required (for example 2023-06-01)",
        );
        return refuse(&app, api, &e, &request_id);
    }
    let mut req = match api.parse(&bytes) {
        Ok(r) => r,
        Err(e) => return refuse(&app, api, &e, &request_id),
    };
    if let Some((model, stream)) = url {
        req.model = model;
        req.stream = stream;
    }
    if let Err(e) = app.chains.continue_from(&mut req) {
        return refuse(&app, api, &e, &request_id);
    }
    let Some(spec) = app.scenario.model(&req.model) else {
        return refuse(&app, api, &app.unknown_model(&req.model), &request_id);
    };
    let session = session::identify(
        &req,
        header(&headers, "x-plimsoll-session"),
        header(&headers, "x-plimsoll-nonce"),
    );
    let hash = content_hash(app.seed, &req);
    let arrival = app.ledger.arrive(session.key(), hash, req.prompt_tokens);
    let found = oracle::check(&req, &session, &spec, app.scenario.integrity, &app.ledger);
    app.ledger.record(found);
    // Reasoning sent back dropped, moved or altered: the API's own 400.
    let seal_key = thoughts::key(app.seed);
    if spec.reasoning.mode != ReasoningMode::Off {
        if let Some(r) = thoughts::check(&req, session.key(), seal_key, |id| app.chains.stored(id))
        {
            if app.scenario.integrity.reasoning {
                app.ledger.record(vec![r.violation]);
            }
            return refuse(&app, api, &r.error, &request_id);
        }
    }

    // The provider's quotas: a request over one is refused before anything else.
    let scopes = app.pushback.scopes(&app.scenario, &req.model, &spec);
    let key = if scopes.is_empty() {
        String::new()
    } else {
        key_of(&headers)
    };
    if let Err(r) = app
        .pushback
        .admit(&scopes, &key, req.prompt_tokens, std::time::Instant::now())
    {
        app.ledger.refused(session.key());
        app.stats.errors.fetch_add(1, Relaxed);
        return inject::over_quota(api, &req.model, &r, &request_id);
    }

    // Failures draw from their own RNG, seeded by the conversation and the attempt,
    // so a retry can succeed and replies themselves never depend on failure settings.
    let failures = app.failures_for(&req.model, &spec);
    let mut frng = ChaCha8Rng::seed_from_u64(fnv1a(hash, &arrival.attempt.to_le_bytes()));
    let mut draw = failures.draw(&mut frng);
    // A failure script decides instead of the draw when one of its rules applies.
    let mut cut_token = None;
    if !spec.fail.is_empty() {
        let nth = app.nth_call(&req.model);
        if let Some(rule) = fail_script::scripted(&spec.fail, arrival.attempt, nth) {
            draw = crate::failures::Draw {
                early: (rule.with != Injected::Cut).then_some(rule.with),
                cut: rule.with == Injected::Cut,
                ..Default::default()
            };
            cut_token = rule.at_token;
        }
    }
    let early = draw
        .early
        .or((draw.cut && !req.stream).then_some(Injected::Reset));
    if let Some(kind) = early {
        app.ledger.injected(session.key(), kind);
        app.stats.errors.fetch_add(1, Relaxed);
        return inject::early(api, kind, &failures, &request_id);
    }

    // A generation slot: the wait counts in the time to first token.
    let (held, slowdown, waited) = match app.pushback.enter(&scopes).await {
        Ok(x) => x,
        Err(full) => {
            app.ledger.refused(session.key());
            app.stats.errors.fetch_add(1, Relaxed);
            return inject::queue_full(api, &full, &request_id);
        }
    };
    let start = if !held.gated() {
        start
    } else {
        app.ledger
            .queued(session.key(), waited.as_secs_f64() * 1000.0);
        Instant::now()
    };

    let mut rng = ChaCha8Rng::seed_from_u64(hash);
    let id = format!("{:016x}", fnv1a(hash, b"id"));
    let reply = reply::decide(
        &req,
        &spec,
        &session,
        id,
        app.created_unix(),
        seal_key,
        &mut rng,
    );
    record_said(&app, session.key(), &reply);
    app.chains.keep(&req, &reply);
    let readings = app.pushback.spend_output(
        &scopes,
        &key,
        reply.output_tokens,
        std::time::Instant::now(),
    );
    app.pushback.answered();
    let renderer = StreamRenderer::new(api, reply, req.include_usage, spec.tokens_per_chunk);
    let mut schedule = Schedule::new(&spec);
    let n = renderer.chunks().len();
    if draw.spike {
        app.ledger.injected(session.key(), Injected::Spike);
        schedule.spike(failures.spike_ms);
    }
    if draw.stall {
        app.ledger.injected(session.key(), Injected::Stall);
        schedule.stall_before(frng.gen_range(0..n.max(1)), failures.stall_ms);
    }
    let cut_at = (draw.cut && req.stream).then(|| {
        app.ledger.injected(session.key(), Injected::Cut);
        match cut_token {
            Some(k) => after_tokens(renderer.chunks(), k),
            None if n > 1 => frng.gen_range(1..n),
            None => 0,
        }
    });
    // The whole scheduled generation time, drawn on copies so the stream's own
    // draws are untouched.
    let (mut sched, mut r2) = (schedule.clone(), rng.clone());
    // When the first token is due, and the first token of the answer (after the
    // reasoning): what a user of a reasoning model waits for.
    let (mut total, mut first, mut answer) = (Duration::ZERO, None, None);
    for c in renderer.chunks() {
        total = sched.next(c.tokens as u32, c.thinking, &mut r2);
        first.get_or_insert(total);
        if !c.thinking {
            answer.get_or_insert(total);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    app.ledger.llm_time(session.key(), ms(total));
    let reasoned = renderer.reply().reasoning_tokens;
    if reasoned > 0 {
        let first = ms(first.unwrap_or(total));
        app.ledger
            .reasoned(session.key(), reasoned, first, ms(answer.unwrap_or(total)));
    }
    // A busy provider generates slower: that, like the wait for a slot, is load's doing,
    // so it stays out of the unloaded time the session is measured against.
    schedule.slow_tokens(slowdown);
    let plan = Plan {
        app,
        api,
        request_id,
        renderer,
        schedule,
        rng,
        start,
        session: session.key().to_string(),
        readings,
        held,
    };
    if req.stream {
        stream(plan, cut_at)
    } else {
        whole(plan).await
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
fn record_said(app: &App, session: &str, reply: &wire::Reply) {
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
}

/// Everything needed to send one decided reply.
struct Plan {
    app: Arc<App>,
    api: Api,
    request_id: String,
    renderer: StreamRenderer,
    schedule: Schedule,
    rng: ChaCha8Rng,
    start: Instant,
    session: String,
    /// The quotas' state after this request, for the rate-limit headers.
    readings: Vec<Reading>,
    /// Generation slots, held until the reply is sent.
    held: Held,
}

pub(crate) fn refuse(app: &App, api: Api, e: &WireError, request_id: &str) -> Response {
    app.stats.errors.fetch_add(1, Relaxed);
    error_response(api, e, request_id)
}

async fn whole(mut p: Plan) -> Response {
    let mut due = Duration::ZERO;
    for c in p.renderer.chunks() {
        due = p.schedule.next(c.tokens as u32, c.thinking, &mut p.rng);
    }
    let deadline = p.start + due;
    tokio::time::sleep_until(deadline).await;
    let late = Instant::now().saturating_duration_since(deadline);
    p.app.stats.record_late(late);
    p.app.ledger.late(&p.session, late.as_secs_f64() * 1000.0);
    let mut resp = Response::new(Body::from(wire::render_json(p.api, p.renderer.reply())));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_request_id(h, p.api, &p.request_id);
    put_headers(h, p.api, &p.readings);
    drop(p.held);
    resp
}

/// Counts an open stream for as long as its body lives, and reports its worst
/// lateness to the ledger when it ends.
struct OpenStream {
    app: Arc<App>,
    session: String,
    late_max_ms: f64,
    /// Generation slots: free once the stream's body is gone.
    _held: Held,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.app.stats.streams_open.fetch_sub(1, Relaxed);
        self.app.ledger.late(&self.session, self.late_max_ms);
    }
}

struct StreamState {
    renderer: StreamRenderer,
    schedule: Schedule,
    rng: ChaCha8Rng,
    start: Instant,
    next: usize,
    /// The deadline of chunk `next`, when already drawn.
    next_due: Option<Duration>,
    /// An injected cut: the connection drops before this frame.
    cut_at: Option<usize>,
    open: OpenStream,
}

impl StreamState {
    fn due_of_next(&mut self) -> Duration {
        match self.next_due.take() {
            Some(d) => d,
            None => {
                let c = self.renderer.chunks()[self.next];
                self.schedule
                    .next(c.tokens as u32, c.thinking, &mut self.rng)
            }
        }
    }

    fn late(&mut self, late: Duration) {
        self.open.app.stats.record_late(late);
        self.open.late_max_ms = self.open.late_max_ms.max(late.as_secs_f64() * 1000.0);
    }
}

fn stream(p: Plan, cut_at: Option<usize>) -> Response {
    p.app.stats.streams_total.fetch_add(1, Relaxed);
    p.app.stats.streams_open.fetch_add(1, Relaxed);
    let state = StreamState {
        renderer: p.renderer,
        schedule: p.schedule,
        rng: p.rng,
        start: p.start,
        next: 0,
        next_due: None,
        cut_at,
        open: OpenStream {
            app: p.app,
            session: p.session,
            late_max_ms: 0.0,
            _held: p.held,
        },
    };
    let frames = futures_util::stream::unfold(state, |mut st| async move {
        loop {
            let n = st.renderer.chunks().len();
            if st.next >= n {
                return None;
            }
            let deadline = st.start + st.due_of_next();
            tokio::time::sleep_until(deadline).await;
            if st.cut_at == Some(st.next) {
                // Pending once, so hyper writes out the frames already given to it before
                // the error drops the connection: the frames before a cut all arrive (a
                // scripted cut after K tokens delivers K, not sometimes K − 1). Then the
                // stream ends.
                tokio::task::yield_now().await;
                st.next = n;
                let cut = std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "stream cut (injected by plimsoll)",
                );
                return Some((Err(cut), st));
            }
            let now = Instant::now();
            // Room for a typical frame and its SSE framing without regrowing.
            let mut out = Vec::with_capacity(1024);
            st.late(now.saturating_duration_since(deadline));
            st.renderer.frame(st.next, &mut out);
            st.next += 1;
            // Frames already due (the task woke late) go out in the same write.
            while st.next < n && st.cut_at != Some(st.next) {
                let due = st.due_of_next();
                if st.start + due > now {
                    st.next_due = Some(due);
                    break;
                }
                st.late(now - (st.start + due));
                st.renderer.frame(st.next, &mut out);
                st.next += 1;
            }
            // A frame with nothing to send (the end of hidden reasoning in Chat
            // Completions, a Gemini function call's partial arguments): no write.
            if !out.is_empty() {
                return Some((Ok(Bytes::from(out)), st));
            }
        }
    });
    let mut resp = Response::new(Body::from_stream(frames));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    add_request_id(h, p.api, &p.request_id);
    put_headers(h, p.api, &p.readings);
    resp
}
