//! A session as a sequence of requests: its setup requests once, each turn's requests in
//! order (the turn timed from its first request to its last reply), its teardown
//! requests after the last turn; every request timed on its own, polled `until` its
//! value appears, checked, and its extracts kept for the requests that follow.

use super::http_turn::{send, status_ok, HttpReply, Outgoing};
use super::pace;
use super::vars::Vars;
use crate::address::target;
use crate::checks::{check_one, extract, last_json, reply_json};
use crate::http::Conn;
use crate::pointer;
use crate::run::Ctx;
use crate::run::Failure;
use crate::spec::{Request, SessionSpec};
use crate::stream;
use crate::template::fill;
use std::time::Duration;
use tokio::time::Instant;

/// What one request gave: its extracts, its first token (stream), when it ended.
pub(super) struct Done {
    pub values: Vec<(String, String)>,
    pub first_token: Option<Instant>,
    pub done: Instant,
}

/// Runs a session's setup, turns and teardown. Returns Ok when every turn succeeded
/// (teardown failures are counted, not fatal).
pub(super) async fn run(spec: &SessionSpec, vars: &mut Vars, ctx: Ctx<'_>) -> Result<(), Failure> {
    let mut conn = None;
    setup(spec, vars, &mut conn, &ctx).await?;
    turns(spec, vars, &mut conn, &ctx).await?;
    teardown(spec, vars, &mut conn, &ctx).await;
    Ok(())
}

/// The setup requests, once.
pub(super) async fn setup(
    spec: &SessionSpec,
    vars: &mut Vars,
    conn: &mut Option<Conn>,
    ctx: &Ctx<'_>,
) -> Result<(), Failure> {
    for r in &spec.setup {
        let d = request(r, spec, vars, 0, conn, ctx).await.map_err(|e| {
            ctx.recorder.failed_in_setup();
            named(spec, r, e, "setup")
        })?;
        keep(vars, d.values);
    }
    Ok(())
}

/// Every turn's requests, in order, each turn timed from its first request to its last reply.
pub(super) async fn turns(
    spec: &SessionSpec,
    vars: &mut Vars,
    conn: &mut Option<Conn>,
    base: &Ctx<'_>,
) -> Result<(), Failure> {
    let recorder = base.recorder;
    for turn in 1..=pace::turns(spec, vars) {
        pace::think(spec, vars, turn, recorder).await;
        let began = Instant::now();
        let mut first = None;
        let mut streamed = false;
        for r in &spec.turn {
            let d = request(r, spec, vars, turn, conn, base)
                .await
                .map_err(|e| named(spec, r, e, &format!("turn {turn}")))?;
            streamed |= r.stream;
            first = first.or(d.first_token);
            keep(vars, d.values);
        }
        recorder.turn_done(
            turn,
            began,
            streamed.then_some(first).flatten(),
            vars.pace_bps.is_some(),
        );
    }
    Ok(())
}

/// The teardown requests: a failure is counted (`teardown_…`), the session stands.
pub(super) async fn teardown(
    spec: &SessionSpec,
    vars: &mut Vars,
    conn: &mut Option<Conn>,
    ctx: &Ctx<'_>,
) {
    let recorder = ctx.recorder;
    for r in &spec.teardown {
        match request(r, spec, vars, spec.turns, conn, ctx).await {
            Ok(d) => keep(vars, d.values),
            Err(f) => recorder.error(Failure::new(
                format!("teardown_{}", f.kind),
                format!("teardown, request {:?} ({}): {}", r.name, r.at, f.message),
            )),
        }
    }
}

fn keep(vars: &mut Vars, values: Vec<(String, String)>) {
    for (k, v) in values {
        vars.set(k, v);
    }
}

/// An error with the request and the phase it happened in.
fn named(spec: &SessionSpec, r: &Request, f: Failure, phase: &str) -> Failure {
    match spec.sequence {
        true => f.said(|m| format!("{phase}, request {:?} ({}): {m}", r.name, r.at)),
        false => f.said(|m| format!("{phase}: {m}")),
    }
}

/// One request: sent (again, every `interval_ms`, while `until` is not met), its status
/// and checks judged, its values extracted; timed into its own histogram.
async fn request(
    r: &Request,
    spec: &SessionSpec,
    vars: &mut Vars,
    turn: u32,
    conn: &mut Option<Conn>,
    ctx: &Ctx<'_>,
) -> Result<Done, Failure> {
    let t0 = Instant::now();
    // One id per request (not per poll of it), so a run replays with the same ids.
    vars.requests += 1;
    let outcome = poll(r, spec, vars, turn, conn, ctx).await;
    let record = spec.sequence.then_some(r.name.as_str());
    match &outcome {
        Ok(d) => ctx.recorder.request_done(record, d.done.duration_since(t0)),
        Err(_) => ctx.recorder.request_failed(record),
    }
    outcome
}

async fn poll(
    r: &Request,
    spec: &SessionSpec,
    vars: &mut Vars,
    turn: u32,
    conn: &mut Option<Conn>,
    ctx: &Ctx<'_>,
) -> Result<Done, Failure> {
    let t0 = Instant::now();
    loop {
        let reply = once(r, spec, vars, turn, conn, ctx).await?;
        status_ok(&reply, r.expect_status)?;
        let events = r.stream.then(|| stream::events(&reply.body));
        let doc = match &events {
            Some(e) => last_json(e),
            None => reply_json(false, &reply.body),
        };
        if let Some(u) = &r.until {
            let got = doc.as_ref().and_then(|d| pointer::get(d, &u.pointer));
            if !pointer::holds(got, u.equals.as_ref()) {
                if t0.elapsed() >= Duration::from_millis(u.timeout_ms) {
                    let last = got.map_or("missing".to_string(), |v| v.to_string());
                    return Err(Failure::new(
                        "timeout",
                        format!(
                            "{} did not become {} within {} ms of polling (last: {last})",
                            u.pointer,
                            u.equals
                                .as_ref()
                                .map_or("present".to_string(), |v| v.to_string()),
                            u.timeout_ms
                        ),
                    ));
                }
                tokio::time::sleep(Duration::from_millis(u.interval_ms)).await;
                continue;
            }
        }
        let text = events
            .as_ref()
            .map(|e| stream::text(e, r.text_pointer.as_deref()));
        for c in &r.checks {
            check_one(c, doc.as_ref(), text.as_deref())
                .map_err(|m| Failure::new("check_failed", m))?;
        }
        let values = extract(&r.extract, doc.as_ref(), Some(&reply.headers))
            .map_err(|m| Failure::new("extract_failed", format!("{}: {m}", r.at)))?;
        let first_token = events.as_ref().and_then(|e| {
            let i = stream::first_token(e, r.ttft_event.as_ref())?;
            reply.arrival(e[i].end)
        });
        return Ok(Done {
            values,
            first_token,
            done: reply.done,
        });
    }
}

/// Why `name` has no value when `r` needs it, and what to change.
pub(super) fn unset_message(spec: &SessionSpec, r: &Request, name: &str, turn: u32) -> String {
    let setter = spec
        .requests()
        .find(|q| q.extract.iter().any(|e| e.name == name));
    let fix = match setter {
        Some(q) if spec.turn.iter().position(|t| t.name == q.name) > spec.turn.iter().position(|t| t.name == r.name) => format!(
            "request {:?} ({}) sets it, but runs after this one in the turn: put it first",
            q.name, q.at
        ),
        Some(q) => format!(
            "request {:?} ({}) sets it, but its reply did not; if it may be absent, give that extract a default",
            q.name, q.at
        ),
        None => "nothing extracts it".to_string(),
    };
    format!(
        "{}: {{{{{name}}}}} has no value yet (turn {turn}): {fix}",
        r.at
    )
}

/// Sends the request once, its templates filled from the session's values.
async fn once(
    r: &Request,
    spec: &SessionSpec,
    vars: &mut Vars,
    turn: u32,
    conn: &mut Option<Conn>,
    ctx: &Ctx<'_>,
) -> Result<HttpReply, Failure> {
    let filler = vars.filler(turn);
    let refs: Vec<(&str, &str)> = filler
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let unset = |name: String| Failure::new("config", unset_message(spec, r, &name, turn));
    let url = fill(&r.url, &refs).map_err(unset)?;
    let (addr, path) =
        target(&url, ctx.allow_remote).map_err(|e| Failure::new("config", e.to_string()))?;
    let body = match (&r.fields, r.bodies.is_empty()) {
        (Some(f), _) => crate::encode::encode(f, |t| fill(t, &refs)).map_err(unset)?,
        (None, true) => Vec::new(),
        (None, false) => fill(
            &r.bodies[(turn.max(1) as usize - 1).min(r.bodies.len() - 1)],
            &refs,
        )
        .map_err(unset)?
        .into_bytes(),
    };
    let mut headers = Vec::with_capacity(r.headers.len());
    for (k, v) in &r.headers {
        headers.push((k.clone(), fill(v, &refs).map_err(unset)?));
    }
    let out = Outgoing {
        addr,
        method: &r.method,
        path: &path,
        headers: &headers,
        body,
        timeout_ms: ctx.timeout_ms,
        done_event: r.done_event.as_ref(),
        pace_bps: vars.pace_bps,
    };
    send(out, conn).await
}
