//! Running C concurrent sessions of K turns against the SUT (closed model: every
//! session runs its turns back to back, with think time between them).
//!
//! Latencies go into HDR histograms in microseconds: per turn, per session, and time to
//! first event (SSE). A failed turn (connect error, timeout, unexpected status, broken
//! body, failed check) fails its session and is counted by kind. A ticker measures the
//! driver's own scheduling lag, so a run can tell when the harness was the bottleneck.

use crate::checks::{check_one, reply_json};
use crate::http::Conn;
use crate::http_turn::http_turn;
use crate::load::{FullLoad, Load};
use crate::session::{render, Protocol, SessionSpec};
use anyhow::{bail, Context};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

#[derive(Clone, Debug)]
pub struct DriveOptions {
    pub concurrency: usize,
    /// The SUT's base URL, `http://127.0.0.1:PORT`.
    pub base: String,
    pub seed: u64,
    /// The whole step's limit; sessions still running then fail with `timeout`.
    pub step_timeout: Duration,
    /// Allow a URL that is not loopback.
    pub allow_remote: bool,
    /// Open model: sessions arrive at this rate (per second) instead of all at once;
    /// `concurrency` is then the number of sessions. Latency is counted from each
    /// session's intended start, so a late start is not hidden (coordinated omission).
    pub arrival_rate: Option<f64>,
}

/// Live counters for a progress line.
#[derive(Default, Debug)]
pub struct Progress {
    pub sessions_ok: AtomicU64,
    pub sessions_failed: AtomicU64,
    pub turns: AtomicU64,
    pub in_flight: AtomicU64,
    pub peak_in_flight: AtomicU64,
}

#[derive(Debug)]
pub struct DriveReport {
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub turn_us: Histogram<u64>,
    pub session_us: Histogram<u64>,
    pub ttft_us: Histogram<u64>,
    pub lag_us: Histogram<u64>,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub timed_out: bool,
    /// Most sessions in flight at once (the concurrency an open model reached).
    pub peak_in_flight: u64,
    /// First error message of each kind, for the terminal.
    pub first_errors: BTreeMap<String, String>,
    /// The span of full load (see `load`).
    pub full_load: Option<FullLoad>,
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 24 * 3_600_000_000, 3).expect("static bounds")
}

struct Shared {
    turn: Mutex<Histogram<u64>>,
    session: Mutex<Histogram<u64>>,
    ttft: Mutex<Histogram<u64>>,
    errors: Mutex<(BTreeMap<String, u64>, BTreeMap<String, String>)>,
    progress: Arc<Progress>,
    t0: Instant,
    load: Load,
}

impl Shared {
    /// A session ended (well or not): the first end closes the span of full load.
    fn session_ended(&self) {
        self.load.session_ended(self.t0.elapsed());
    }

    fn error(&self, kind: String, message: String) {
        let mut e = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        *e.0.entry(kind.clone()).or_insert(0) += 1;
        e.1.entry(kind).or_insert(message);
    }
}

fn record(h: &Mutex<Histogram<u64>>, d: Duration) {
    let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
    let _ = h.record((d.as_micros() as u64).max(1));
}

/// `http://host:port/path` → (address, path). Only loopback unless allowed.
fn target(url: &str, allow_remote: bool) -> anyhow::Result<(SocketAddr, String)> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("ws://"))
        .with_context(|| format!("url {url:?} must start with http:// or ws://"))?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let addr = hostport
        .to_socket_addrs()
        .with_context(|| format!("url {url:?}: cannot resolve {hostport:?} (write host:port)"))?
        .next()
        .with_context(|| format!("url {url:?}: {hostport:?} resolves to nothing"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        bail!("url {url:?} is not a loopback address; Plimsoll sends load only to this machine unless you pass --allow-remote");
    }
    Ok((addr, path))
}

/// `http://…` → `ws://…`.
fn ws_base(base: &str) -> String {
    base.replacen("http://", "ws://", 1)
}

/// The nonce of session `i` under `seed`: `psn` + 16 hex digits.
pub fn nonce(seed: u64, i: usize) -> String {
    let mut x = seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED;
    // SplitMix64: a fixed, well-mixed function of (seed, session).
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    format!("psn{:016x}", z ^ (z >> 31))
}

pub async fn drive(
    spec: &SessionSpec,
    opts: &DriveOptions,
    progress: Arc<Progress>,
) -> anyhow::Result<DriveReport> {
    if opts.concurrency == 0 {
        bail!("concurrency must be at least 1");
    }
    // Check the URL once before starting thousands of sessions.
    let port = opts
        .base
        .rsplit(':')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string();
    let probe_url = render(
        &spec.url,
        &[
            ("base", &opts.base),
            ("ws_base", &ws_base(&opts.base)),
            ("port", &port),
            ("session", "s0"),
            ("turn", "1"),
        ],
    );
    target(&probe_url, opts.allow_remote)?;

    let shared = Arc::new(Shared {
        turn: Mutex::new(hist()),
        session: Mutex::new(hist()),
        ttft: Mutex::new(hist()),
        errors: Mutex::new((BTreeMap::new(), BTreeMap::new())),
        progress: progress.clone(),
        t0: Instant::now(),
        load: Load::default(),
    });
    let stop_lag = Arc::new(AtomicBool::new(false));
    let lag = tokio::spawn(measure_lag(stop_lag.clone()));
    let spec = Arc::new(spec.clone());
    let t0 = shared.t0;
    let interval = opts
        .arrival_rate
        .filter(|r| *r > 0.0)
        .map(|r| Duration::from_secs_f64(1.0 / r));
    let spawner = {
        let (spec, shared, opts, port) = (spec.clone(), shared.clone(), opts.clone(), port.clone());
        async move {
            let mut tasks = tokio::task::JoinSet::new();
            for i in 0..opts.concurrency {
                // Closed model: everyone starts now. Open model: session i is due at i × interval.
                let intended = interval.map_or(t0, |iv| t0 + iv * i as u32);
                tokio::time::sleep_until(intended).await;
                let (spec, shared, opts, port) =
                    (spec.clone(), shared.clone(), opts.clone(), port.clone());
                tasks.spawn(
                    async move { run_session(i, intended, &spec, &opts, &port, &shared).await },
                );
            }
            tasks
        }
    };
    let mut tasks = match tokio::time::timeout_at(t0 + opts.step_timeout, spawner).await {
        Ok(t) => t,
        Err(_) => bail!("the step timeout ran out before all sessions had arrived; lower the session count or raise the rate"),
    };
    let deadline = t0 + opts.step_timeout;
    let mut timed_out = false;
    loop {
        match tokio::time::timeout_at(deadline, tasks.join_next()).await {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => {
                timed_out = true;
                let left = tasks.len() as u64;
                tasks.abort_all();
                progress.sessions_failed.fetch_add(left, Relaxed);
                shared.error(
                    "timeout".into(),
                    format!(
                        "{left} session(s) still running when the step timeout of {:.0} s ran out",
                        opts.step_timeout.as_secs_f64()
                    ),
                );
                break;
            }
        }
    }
    let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
    stop_lag.store(true, Relaxed);
    let lag_us = lag.await.unwrap_or_else(|_| hist());
    let take = |m: &Mutex<Histogram<u64>>| m.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let full_load = shared.load.full_load();
    let (errors_by_kind, first_errors) = shared
        .errors
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(DriveReport {
        sessions_ok: progress.sessions_ok.load(Relaxed),
        sessions_failed: progress.sessions_failed.load(Relaxed),
        turns: progress.turns.load(Relaxed),
        wall_ms,
        turn_us: take(&shared.turn),
        session_us: take(&shared.session),
        ttft_us: take(&shared.ttft),
        lag_us,
        errors_by_kind,
        timed_out,
        first_errors,
        peak_in_flight: progress.peak_in_flight.load(Relaxed),
        full_load,
    })
}

async fn measure_lag(stop: Arc<AtomicBool>) -> Histogram<u64> {
    let mut h = hist();
    let tick = Duration::from_millis(10);
    while !stop.load(Relaxed) {
        let due = Instant::now() + tick;
        tokio::time::sleep_until(due).await;
        let _ = h.record((Instant::now().saturating_duration_since(due).as_micros() as u64).max(1));
    }
    h
}

/// Counts a session in flight for as long as it runs.
struct InFlight<'a>(&'a Progress);

impl<'a> InFlight<'a> {
    fn new(p: &'a Progress) -> Self {
        let now = p.in_flight.fetch_add(1, Relaxed) + 1;
        p.peak_in_flight.fetch_max(now, Relaxed);
        InFlight(p)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Relaxed);
    }
}

/// `start` is when the session was meant to begin: its latency counts from there.
async fn run_session(
    i: usize,
    start: Instant,
    spec: &SessionSpec,
    opts: &DriveOptions,
    port: &str,
    shared: &Shared,
) {
    let _flight = InFlight::new(&shared.progress);
    let session = format!("s{i}");
    let nonce = nonce(opts.seed, i);
    let mut extracted: Vec<(String, String)> = Vec::new();
    let mut link = Link::default();
    let ws = ws_base(&opts.base);
    for turn in 1..=spec.turns {
        if turn > 1 && spec.think_ms > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(spec.think_ms / 1000.0)).await;
        }
        let turn_s = turn.to_string();
        let mut vars: Vec<(&str, &str)> = vec![
            ("session", &session),
            ("nonce", &nonce),
            ("turn", &turn_s),
            ("base", &opts.base),
            ("ws_base", &ws),
            ("port", port),
        ];
        vars.extend(extracted.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let began = Instant::now();
        match one_turn(spec, opts, &vars, turn, &mut link, shared).await {
            Ok(values) => {
                shared.progress.turns.fetch_add(1, Relaxed);
                shared
                    .load
                    .turn_done(began - shared.t0, shared.t0.elapsed());
                for (k, v) in values {
                    match extracted.iter_mut().find(|(n, _)| *n == k) {
                        Some(slot) => slot.1 = v,
                        None => extracted.push((k, v)),
                    }
                }
            }
            Err((kind, message)) => {
                shared.error(kind, format!("session {session} turn {turn}: {message}"));
                shared.progress.sessions_failed.fetch_add(1, Relaxed);
                shared.session_ended();
                return;
            }
        }
    }
    record(&shared.session, start.elapsed());
    shared.progress.sessions_ok.fetch_add(1, Relaxed);
    shared.session_ended();
}

pub(crate) type TurnError = (String, String);

/// A session's connection to the SUT, kept across its turns.
#[derive(Default)]
struct Link {
    http: Option<Conn>,
    ws: Option<crate::ws::Ws>,
    /// `openai-chat`: the conversation so far.
    conversation: Vec<serde_json::Value>,
}

async fn one_turn(
    spec: &SessionSpec,
    opts: &DriveOptions,
    vars: &[(&str, &str)],
    turn: u32,
    link: &mut Link,
    shared: &Shared,
) -> Result<Vec<(String, String)>, TurnError> {
    let url = render(&spec.url, vars);
    let (addr, path) =
        target(&url, opts.allow_remote).map_err(|e| ("config".to_string(), e.to_string()))?;
    let mut body = render(
        &spec.bodies[(turn as usize - 1).min(spec.bodies.len() - 1)],
        vars,
    );
    let mut first_when: fn(&[u8]) -> bool = crate::chat::any_byte;
    if let Some(chat) = &spec.chat {
        link.conversation
            .push(serde_json::json!({"role": "user", "content": body}));
        body = crate::chat::request(chat, &link.conversation);
        if chat.stream {
            first_when = if chat.anthropic {
                crate::chat::has_text_delta
            } else {
                crate::chat::has_content
            };
        }
    }
    let (out, first, sent) = if spec.protocol == Protocol::Ws {
        let sent = Instant::now();
        let fut = crate::ws::turn(&mut link.ws, &url, body, &spec.ws_done);
        let reply =
            match tokio::time::timeout(Duration::from_millis(spec.turn_timeout_ms), fut).await {
                Err(_) => {
                    link.ws = None;
                    return Err((
                        "timeout".into(),
                        format!("no complete reply within {} ms", spec.turn_timeout_ms),
                    ));
                }
                Ok(r) => r?,
            };
        (reply.last, reply.first, sent)
    } else {
        http_turn(spec, vars, (addr, &path), body, first_when, &mut link.http).await?
    };
    record(&shared.turn, sent.elapsed());
    let timed_first = match spec.protocol {
        Protocol::Sse | Protocol::Ws => true,
        Protocol::OpenaiChat | Protocol::AnthropicMessages => {
            spec.chat.as_ref().is_some_and(|c| c.stream)
        }
        Protocol::Http => false,
    };
    if let (true, Some(f)) = (timed_first, first) {
        record(&shared.ttft, f.duration_since(sent));
    }
    let chat_reply = match &spec.chat {
        Some(chat) => {
            let m = crate::chat::reply(chat, &out).ok_or_else(|| {
                let snippet: String = String::from_utf8_lossy(&out).chars().take(200).collect();
                (
                    "protocol".to_string(),
                    format!("the reply is not a chat completion: {snippet}"),
                )
            })?;
            link.conversation.push(m.clone());
            Some(m)
        }
        None => None,
    };
    if spec.extract.is_empty() && spec.checks.is_empty() {
        return Ok(Vec::new());
    }
    let doc = match chat_reply {
        Some(m) => Some(m),
        None => reply_json(spec.protocol, &out),
    };
    let doc = doc.ok_or_else(|| {
        (
            "check_failed".to_string(),
            "the reply is not JSON (checks and [extract] need a JSON reply, SSE data event or WebSocket message)".to_string(),
        )
    })?;
    for check in &spec.checks {
        check_one(check, &doc).map_err(|m| ("check_failed".to_string(), m))?;
    }
    let mut values = Vec::new();
    for (name, pointer) in &spec.extract {
        let v = doc.pointer(pointer).ok_or_else(|| {
            (
                "check_failed".to_string(),
                format!("extract.{name}: {pointer} is not in the reply"),
            )
        })?;
        values.push((
            name.clone(),
            match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            },
        ));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_stable_and_distinct() {
        assert_eq!(nonce(1, 2), nonce(1, 2));
        assert_ne!(nonce(1, 2), nonce(1, 3));
        assert_ne!(nonce(1, 2), nonce(2, 2));
        assert_eq!(nonce(1, 2).len(), 19);
    }

    #[test]
    fn only_loopback_without_the_flag() {
        assert!(target("http://127.0.0.1:9/x", false).is_ok());
        let e = target("http://10.1.2.3:80/x", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--allow-remote"), "{e}");
        assert!(target("http://10.1.2.3:80/x", true).is_ok());
    }
}
