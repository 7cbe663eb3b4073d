//! Running C concurrent sessions of K turns against the SUT (closed model: every
//! session runs its turns back to back, with think time between them).
//!
//! Latencies go into HDR histograms in microseconds: per turn, per session, and time to
//! first event (SSE). A failed turn (connect error, timeout, unexpected status, broken
//! body, failed check) fails its session and is counted by kind. A ticker measures the
//! driver's own scheduling lag, so a run can tell when the harness was the bottleneck.

use crate::checks::{check_one, extract, reply_json};
use crate::http::Conn;
use crate::http_turn::{send, status_ok, Outgoing};
use crate::load::{FullLoad, Load};
use crate::sequence::{Ctx, Vars};
use crate::session::{Protocol, SessionSpec};
use crate::template::{fill, render};
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
    /// Replicas of the SUT: session `i` goes to `replicas[i % n]` for all its turns
    /// (sticky by session); empty: every session to `base`.
    pub replicas: Vec<String>,
    pub seed: u64,
    /// The whole step's limit; sessions still running then fail with `timeout`.
    pub step_timeout: Duration,
    /// Allow a URL that is not loopback.
    pub allow_remote: bool,
    /// Open model: sessions arrive at this rate (per second) instead of all at once;
    /// `concurrency` is then the number of sessions. Latency is counted from each
    /// session's intended start, so a late start is not hidden (coordinated omission).
    pub arrival_rate: Option<f64>,
    /// Resident sessions: this many open first (setup run), `concurrency` of them active
    /// at a time (see `resident`).
    pub resident: Option<usize>,
    /// Called once the residents are open, before any turn.
    pub on_resident: Option<crate::resident::Hook>,
    /// Slow consumers: this share of the sessions (spread evenly by index) read their
    /// replies at most this many bytes a second.
    pub slow: Option<(f64, f64)>,
    /// Churn (a soak): each of the `concurrency` slots runs session after session, a new
    /// one (new name, nonce, ids) as soon as the last ends, until this long after the start.
    pub churn: Option<Duration>,
    /// One shard of a step driven from several processes: (index, count). This driver
    /// runs the sessions `i` with `i % count == index`, each at the time the whole
    /// schedule gives it, under its whole-run name `s{i}`.
    pub shard: Option<(usize, usize)>,
    /// When the whole schedule starts (every shard shares it): the driver waits for it.
    pub start_at: Option<std::time::SystemTime>,
    /// Put before every session's name (`{prefix}s{i}`): a SUT and a mock that outlive
    /// one run see new sessions in the next, not the last run's continued.
    pub name_prefix: String,
}

/// Live counters for a progress line.
#[derive(Default, Debug)]
pub struct Progress {
    pub sessions_ok: AtomicU64,
    pub sessions_failed: AtomicU64,
    pub turns: AtomicU64,
    pub in_flight: AtomicU64,
    pub peak_in_flight: AtomicU64,
    /// Resident sessions open (setup done), with `--resident`.
    pub resident: AtomicU64,
}

#[derive(Debug)]
pub struct DriveReport {
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub turn_us: Histogram<u64>,
    pub session_us: Histogram<u64>,
    /// With slow consumers: the slow sessions' times, and everyone else's.
    pub session_slow_us: Histogram<u64>,
    pub session_others_us: Histogram<u64>,
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
    /// Per named request of a `[[setup]]`/`[[turn]]`/`[[teardown]]` session: its
    /// latency (first send to last reply, polls included) and failures.
    pub requests: BTreeMap<String, RequestStats>,
    /// Resident sessions that opened (with `resident`).
    pub resident: u64,
    /// The names (`sN`) of the sessions that failed: what they asked of the provider is
    /// not what a whole session asks.
    pub failed_sessions: std::collections::HashSet<String>,
    /// How late driving began after `start_at`, in ms (0 without one).
    pub late_start_ms: f64,
    /// The sessions this driver was given: its shard's share of `concurrency`.
    pub sessions_planned: u64,
    /// A bus step's account (`[[role]]` sessions).
    pub bus: Option<result::Bus>,
}

/// Whether session `i` is this driver's (every session without shards).
pub fn in_shard(i: usize, shard: Option<(usize, usize)>) -> bool {
    shard.is_none_or(|(index, count)| i % count == index)
}

/// Waits for the shared start; returns how late it began, in ms.
async fn wait_for_start(at: Option<std::time::SystemTime>) -> f64 {
    let Some(at) = at else { return 0.0 };
    if let Ok(ahead) = at.duration_since(std::time::SystemTime::now()) {
        tokio::time::sleep(ahead).await;
    }
    std::time::SystemTime::now()
        .duration_since(at)
        .map_or(0.0, |late| late.as_secs_f64() * 1000.0)
}

#[derive(Debug, Clone)]
pub struct RequestStats {
    pub us: Histogram<u64>,
    pub errors: u64,
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 24 * 3_600_000_000, 3).expect("static bounds")
}

pub(crate) struct Shared {
    turn: Mutex<Histogram<u64>>,
    session: Mutex<Histogram<u64>>,
    session_slow: Mutex<Histogram<u64>>,
    session_others: Mutex<Histogram<u64>>,
    ttft: Mutex<Histogram<u64>>,
    errors: Mutex<(BTreeMap<String, u64>, BTreeMap<String, String>)>,
    requests: Mutex<BTreeMap<String, RequestStats>>,
    failed: Mutex<std::collections::HashSet<String>>,
    pub(crate) progress: Arc<Progress>,
    t0: Instant,
    load: Load,
    /// Sessions end all the time under churn: only a slot's last one ends full load.
    churn: bool,
}

impl Shared {
    /// A turn that began at `began` completed now; `first` is its first token (streams).
    pub(crate) fn turn_done(&self, began: Instant, first: Option<Instant>, slow: bool) {
        if slow {
            // A slow consumer's turn is slow on purpose: counted, not timed with the rest.
            self.progress.turns.fetch_add(1, Relaxed);
            return;
        }
        record(&self.turn, began.elapsed());
        if let Some(f) = first {
            record(&self.ttft, f.duration_since(began));
        }
        self.progress.turns.fetch_add(1, Relaxed);
        self.load.turn_done(began - self.t0, self.t0.elapsed());
    }

    fn request_stats(&self, name: &str, f: impl FnOnce(&mut RequestStats)) {
        let mut m = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        let s = m.entry(name.to_string()).or_insert_with(|| RequestStats {
            us: hist(),
            errors: 0,
        });
        f(s);
    }

    /// A named request succeeded after `d` (None: the one-request form, not reported).
    pub(crate) fn request_done(&self, name: Option<&str>, d: Duration) {
        if let Some(n) = name {
            self.request_stats(n, |s| {
                let _ = s.us.record((d.as_micros() as u64).max(1));
            });
        }
    }

    pub(crate) fn request_failed(&self, name: Option<&str>) {
        if let Some(n) = name {
            self.request_stats(n, |s| s.errors += 1);
        }
    }

    /// A session ended (well or not): the first end closes the span of full load.
    pub(crate) fn session_ended(&self) {
        if !self.churn {
            self.load.session_ended(self.t0.elapsed());
        }
    }

    /// A slot has no more sessions to run: full load is over.
    pub(crate) fn slot_done(&self) {
        self.load.session_ended(self.t0.elapsed());
    }

    pub(crate) fn error(&self, kind: String, message: String) {
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
pub fn target(url: &str, allow_remote: bool) -> anyhow::Result<(SocketAddr, String)> {
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

/// `http://127.0.0.1:8080/` → `8080`.
pub(crate) fn port_of(base: &str) -> String {
    base.rsplit(':')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string()
}

/// `http://…` → `ws://…`.
fn ws_base(base: &str) -> String {
    base.replacen("http://", "ws://", 1)
}

pub async fn drive(
    spec: &SessionSpec,
    opts: &DriveOptions,
    progress: Arc<Progress>,
) -> anyhow::Result<DriveReport> {
    if opts.concurrency == 0 {
        bail!("concurrency must be at least 1");
    }
    if let Some(bus) = &spec.bus {
        return crate::bus::drive(bus, opts, progress).await;
    }
    // Check the URL once before starting thousands of sessions.
    let port = port_of(&opts.base);
    let probe_url = render(
        &spec.turn[0].url,
        &[
            ("base", &opts.base),
            ("ws_base", &ws_base(&opts.base)),
            ("port", &port),
            ("session", "s0"),
            ("turn", "1"),
        ],
    );
    match spec.protocol {
        Protocol::Raw => {
            let (transport, address) = crate::raw::address(&probe_url)?;
            crate::bus::link::check(transport, address, opts.allow_remote)?;
        }
        _ => {
            target(&probe_url, opts.allow_remote)?;
        }
    }
    if opts.shard.is_some() && (opts.resident.is_some() || opts.churn.is_some()) {
        bail!("a shard drives a slice of one step's sessions; resident sessions and a soak's churn are not sharded");
    }
    let late_start_ms = wait_for_start(opts.start_at).await;

    let shared = Arc::new(Shared {
        turn: Mutex::new(hist()),
        session: Mutex::new(hist()),
        session_slow: Mutex::new(hist()),
        session_others: Mutex::new(hist()),
        ttft: Mutex::new(hist()),
        errors: Mutex::new((BTreeMap::new(), BTreeMap::new())),
        requests: Mutex::new(BTreeMap::new()),
        failed: Mutex::new(Default::default()),
        progress: progress.clone(),
        t0: Instant::now(),
        load: Load::default(),
        churn: opts.churn.is_some(),
    });
    let stop_lag = Arc::new(AtomicBool::new(false));
    let lag = tokio::spawn(measure_lag(stop_lag.clone()));
    let spec = Arc::new(spec.clone());
    let t0 = shared.t0;
    let interval = opts
        .arrival_rate
        .filter(|r| *r > 0.0)
        .map(|r| Duration::from_secs_f64(1.0 / r));
    if let (Some(n), Protocol::Http | Protocol::Sse) = (opts.resident, spec.protocol) {
        let run = crate::resident::run(spec.clone(), opts.clone(), port.clone(), shared.clone(), n);
        let timed_out = tokio::time::timeout_at(t0 + opts.step_timeout, run)
            .await
            .is_err();
        if timed_out {
            shared.error(
                "timeout".into(),
                format!("the resident sessions were still running when the step timeout of {:.0} s ran out", opts.step_timeout.as_secs_f64()),
            );
        }
        return Ok(report(&shared, &progress, lag, stop_lag, timed_out).await);
    }
    let planned = (0..opts.concurrency)
        .filter(|i| in_shard(*i, opts.shard))
        .count() as u64;
    if let (Some(for_how_long), None) = (opts.churn, interval) {
        let until = t0 + for_how_long;
        let mut slots = tokio::task::JoinSet::new();
        for slot in 0..opts.concurrency {
            let (spec, shared, opts, port) =
                (spec.clone(), shared.clone(), opts.clone(), port.clone());
            slots.spawn(async move {
                let (mut k, mut failed_in_a_row) = (0, 0u32);
                while Instant::now() < until {
                    let i = slot + k * opts.concurrency;
                    let ok = run_session(i, Instant::now(), &spec, &opts, &port, &shared).await;
                    k += 1;
                    failed_in_a_row = if ok { 0 } else { failed_in_a_row + 1 };
                    if failed_in_a_row >= CHURN_GIVE_UP {
                        // The SUT is gone or broken: hours of instant failures tell nothing more.
                        shared.error(
                            "gave_up".into(),
                            format!(
                                "a slot stopped after {CHURN_GIVE_UP} sessions in a row failed"
                            ),
                        );
                        break;
                    }
                    if failed_in_a_row > 0 {
                        let pause = 100 * u64::from(failed_in_a_row);
                        tokio::time::sleep(Duration::from_millis(pause)).await;
                    }
                }
                shared.slot_done();
            });
        }
        // `step_timeout` already holds the soak's duration and the time its last sessions get.
        let deadline = t0 + opts.step_timeout;
        let timed_out = tokio::time::timeout_at(deadline, async {
            while slots.join_next().await.is_some() {}
        })
        .await
        .is_err();
        if timed_out {
            let left = slots.len() as u64;
            slots.abort_all();
            progress.sessions_failed.fetch_add(left, Relaxed);
            shared.error(
                "timeout".into(),
                format!(
                    "{left} session(s) still running when the step timeout ran out after the soak"
                ),
            );
        }
        return Ok(report(&shared, &progress, lag, stop_lag, timed_out).await);
    }
    let spawner = {
        let (spec, shared, opts, port) = (spec.clone(), shared.clone(), opts.clone(), port.clone());
        async move {
            let mut tasks = tokio::task::JoinSet::new();
            for i in (0..opts.concurrency).filter(|i| in_shard(*i, opts.shard)) {
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
    let mut r = report(&shared, &progress, lag, stop_lag, timed_out).await;
    r.late_start_ms = late_start_ms;
    r.sessions_planned = planned;
    Ok(r)
}

/// The report from what the sessions recorded.
async fn report(
    shared: &Shared,
    progress: &Progress,
    lag: tokio::task::JoinHandle<Histogram<u64>>,
    stop_lag: Arc<AtomicBool>,
    timed_out: bool,
) -> DriveReport {
    let wall_ms = shared.t0.elapsed().as_secs_f64() * 1000.0;
    stop_lag.store(true, Relaxed);
    let lag_us = lag.await.unwrap_or_else(|_| hist());
    let take = |m: &Mutex<Histogram<u64>>| m.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let full_load = shared.load.full_load();
    let requests = shared
        .requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let (errors_by_kind, first_errors) = shared
        .errors
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    DriveReport {
        sessions_ok: progress.sessions_ok.load(Relaxed),
        sessions_failed: progress.sessions_failed.load(Relaxed),
        turns: progress.turns.load(Relaxed),
        wall_ms,
        turn_us: take(&shared.turn),
        session_us: take(&shared.session),
        session_slow_us: take(&shared.session_slow),
        session_others_us: take(&shared.session_others),
        ttft_us: take(&shared.ttft),
        lag_us,
        errors_by_kind,
        timed_out,
        first_errors,
        peak_in_flight: progress.peak_in_flight.load(Relaxed),
        full_load,
        requests,
        resident: progress.resident.load(Relaxed),
        failed_sessions: std::mem::take(
            &mut *shared.failed.lock().unwrap_or_else(|p| p.into_inner()),
        ),
        late_start_ms: 0.0,
        sessions_planned: progress.sessions_ok.load(Relaxed)
            + progress.sessions_failed.load(Relaxed),
        bus: None,
    }
}

pub(crate) async fn measure_lag(stop: Arc<AtomicBool>) -> Histogram<u64> {
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
pub(crate) struct InFlight<'a>(&'a Progress);

impl<'a> InFlight<'a> {
    pub(crate) fn new(p: &'a Progress) -> Self {
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

/// Sessions in a row a churn slot may fail before it stops.
const CHURN_GIVE_UP: u32 = 20;

/// `start` is when the session was meant to begin: its latency counts from there.
/// Whether the session went through.
async fn run_session(
    i: usize,
    start: Instant,
    spec: &SessionSpec,
    opts: &DriveOptions,
    port: &str,
    shared: &Shared,
) -> bool {
    let _flight = InFlight::new(&shared.progress);
    let session = format!("{}s{i}", opts.name_prefix);
    let mut vars = Vars::new(opts.seed, i, fixed_vars(i, opts, port));
    let slow = opts.slow.filter(|(share, _)| is_slow(i, *share));
    vars.pace_bps = slow.map(|(_, bps)| bps);
    let ctx = Ctx {
        shared,
        allow_remote: opts.allow_remote,
        timeout_ms: spec.turn_timeout_ms,
    };
    let outcome = match spec.protocol {
        Protocol::Http | Protocol::Sse => crate::sequence::run(spec, &mut vars, ctx).await,
        _ => talk(spec, &mut vars, &ctx).await,
    };
    if let Err((kind, message)) = outcome {
        shared.error(kind, format!("session {session} {message}"));
        shared
            .failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session);
        shared.progress.sessions_failed.fetch_add(1, Relaxed);
        // A failed session does not end full load for the others: the rate counts it out
        // instead (see step's rates).
        return false;
    }
    record_session(shared, start, slow.is_some());
    shared.session_ended();
    true
}

/// Whether session `i` is one of the slow share: spread evenly, exactly that share.
pub(crate) fn is_slow(i: usize, share: f64) -> bool {
    ((i + 1) as f64 * share).floor() > (i as f64 * share).floor()
}

/// A session's built-in values: its name, nonce, the SUT's base URL and port.
/// With replicas, the one session `i` sticks to.
pub(crate) fn fixed_vars(i: usize, opts: &DriveOptions, port: &str) -> Vec<(String, String)> {
    let (base, port) = match opts.replicas.len() {
        0 => (opts.base.clone(), port.to_string()),
        n => {
            let b = opts.replicas[i % n].clone();
            let p = b.rsplit(':').next().unwrap_or("").to_string();
            (b, p)
        }
    };
    vec![
        ("session".to_string(), format!("{}s{i}", opts.name_prefix)),
        ("nonce".into(), crate::template::nonce(opts.seed, i)),
        ("ws_base".into(), ws_base(&base)),
        ("base".into(), base),
        ("port".into(), port),
    ]
}

/// A session that went through, timed from `start`.
pub(crate) fn record_session(shared: &Shared, start: Instant, slow: bool) {
    // Slow consumers are slow on purpose: kept out of the step's own session times
    // (budgets, inflation), in a histogram of their own.
    if slow {
        record(&shared.session_slow, start.elapsed());
    } else {
        record(&shared.session, start.elapsed());
        record(&shared.session_others, start.elapsed());
    }
    shared.progress.sessions_ok.fetch_add(1, Relaxed);
}

/// A WebSocket session or a chat client's conversation: one message per turn on one link.
async fn talk(spec: &SessionSpec, vars: &mut Vars, ctx: &Ctx<'_>) -> Result<(), TurnError> {
    let mut link = Link::default();
    for turn in 1..=spec.turns {
        if turn > 1 && spec.think_ms > 0.0 {
            tokio::time::sleep(Duration::from_secs_f64(spec.think_ms / 1000.0)).await;
        }
        let mut values: Vec<(String, String)> = vars.values.clone();
        values.push(("turn".into(), turn.to_string()));
        let refs: Vec<(&str, &str)> = values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let began = Instant::now();
        let (got, first) = one_turn(
            spec,
            (ctx.allow_remote, vars.pace_bps),
            &refs,
            turn,
            &mut link,
        )
        .await
        .map_err(|(k, m)| (k, format!("turn {turn}: {m}")))?;
        ctx.shared.turn_done(began, first, vars.pace_bps.is_some());
        for (k, v) in got {
            vars.set(k, v);
        }
    }
    Ok(())
}

pub(crate) type TurnError = (String, String);

/// A session's connection to the SUT, kept across its turns.
#[derive(Default)]
struct Link {
    http: Option<Conn>,
    ws: Option<crate::ws::Ws>,
    raw: Option<crate::raw::Socket>,
    /// `openai-chat`: the conversation so far.
    conversation: Vec<serde_json::Value>,
}

/// One turn of a WebSocket or chat session: the values it extracted and, for a stream,
/// when its first token came.
async fn one_turn(
    spec: &SessionSpec,
    (allow_remote, pace_bps): (bool, Option<f64>),
    vars: &[(&str, &str)],
    turn: u32,
    link: &mut Link,
) -> Result<(Vec<(String, String)>, Option<Instant>), TurnError> {
    let req = &spec.turn[0];
    let unset = |name: String| {
        (
            "config".to_string(),
            crate::sequence::unset_message(spec, req, &name, turn),
        )
    };
    let url = fill(&req.url, vars).map_err(unset)?;
    let mut body = fill(
        &req.bodies[(turn as usize - 1).min(req.bodies.len() - 1)],
        vars,
    )
    .map_err(unset)?;
    if let Some(wire) = spec.wire {
        let fut = crate::raw::turn(&mut link.raw, &url, wire, &body, allow_remote);
        let out = match tokio::time::timeout(Duration::from_millis(spec.turn_timeout_ms), fut).await
        {
            Err(_) => {
                link.raw = None;
                return Err((
                    "timeout".into(),
                    format!("no reply within {} ms", spec.turn_timeout_ms),
                ));
            }
            Ok(r) => r?,
        };
        return checked(req, &out, None).map(|v| (v, None));
    }
    let (addr, path) =
        target(&url, allow_remote).map_err(|e| ("config".to_string(), e.to_string()))?;
    let streamed = spec.protocol == Protocol::Ws || spec.chat.as_ref().is_some_and(|c| c.stream);
    if let Some(chat) = &spec.chat {
        link.conversation
            .push(serde_json::json!({"role": "user", "content": body}));
        body = crate::chat::request(chat, &link.conversation);
    }
    let (out, first, headers) = if spec.protocol == Protocol::Ws {
        let fut = crate::ws::turn(&mut link.ws, &url, body, &spec.ws_done, pace_bps);
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
        (reply.last, reply.first, None)
    } else {
        let mut headers = Vec::with_capacity(req.headers.len());
        for (k, v) in &req.headers {
            headers.push((k.clone(), fill(v, vars).map_err(unset)?));
        }
        let out = Outgoing {
            addr,
            method: &req.method,
            path: &path,
            headers: &headers,
            body,
            timeout_ms: spec.turn_timeout_ms,
            done_event: None,
            pace_bps,
        };
        let reply = send(out, &mut link.http).await?;
        status_ok(&reply, req.expect_status)?;
        let first = match streamed {
            true => {
                let events = crate::stream::events(&reply.body);
                crate::stream::first_token(&events, None).and_then(|i| reply.arrival(events[i].end))
            }
            false => None,
        };
        (reply.body, first, Some(reply.headers))
    };
    let first = first.filter(|_| streamed);
    let doc = match &spec.chat {
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
        None => reply_json(false, &out),
    };
    let values = judged(req, doc.as_ref(), headers.as_ref())?;
    Ok((values, first))
}

/// A raw socket's reply (JSON, or text) through the request's checks and extracts.
fn checked(
    req: &crate::request::Request,
    out: &[u8],
    headers: Option<&hyper::HeaderMap>,
) -> Result<Vec<(String, String)>, TurnError> {
    judged(req, reply_json(false, out).as_ref(), headers)
}

/// The request's checks over the reply, then its extracts.
fn judged(
    req: &crate::request::Request,
    doc: Option<&serde_json::Value>,
    headers: Option<&hyper::HeaderMap>,
) -> Result<Vec<(String, String)>, TurnError> {
    if req.extract.is_empty() && req.checks.is_empty() {
        return Ok(Vec::new());
    }
    for check in &req.checks {
        check_one(check, doc, None).map_err(|m| ("check_failed".to_string(), m))?;
    }
    extract(&req.extract, doc, headers)
        .map_err(|m| ("extract_failed".to_string(), format!("{}: {m}", req.at)))
}

#[cfg(test)]
mod tests {
    use super::*;

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
