//! A bus step: publishers and subscribers instead of request/reply sessions.
//!
//! ```toml
//! transport = "tcp"              # "tcp", "unix" (address = a socket path) or "ws"
//! address = "127.0.0.1:{{port}}" # the default for tcp; ws: "{{ws_base}}/"
//! framing = "line"               # tcp/unix: "line" (\n; sending adds \r\n), "u32"
//!                                # (big-endian length prefix) or "nul" (STOMP)
//! mode = "fanout"                # every subscriber gets every message; "queue": each
//!                                # message goes to exactly one consumer
//! messages = 50                  # per publisher
//! rate = 0                       # messages a second per publisher (0: as fast as it goes)
//! settle_ms = 2000               # after the last publish, how long to wait for stragglers
//! ordered = true                 # a publisher's messages must arrive in order
//!
//! [[role]]
//! kind = "subscriber"            # or "consumer" (the same, in a queue)
//! share = 1.0                    # of --concurrency; or count = 100
//! hello = ["SUBSCRIBE news"]     # frames sent on connect
//! ready = "subscribe"            # ready once a frame containing this comes back
//!
//! [[role]]
//! kind = "publisher"
//! count = 1
//! send = "PUBLISH news {{stamp}}" # {{stamp}} is required; {{pad N}} adds N bytes
//! ```
//!
//! Every subscriber connects and is ready before the first message is sent; then every
//! publisher sends its messages, each carrying a stamp (`pst.<run>.<publisher>.<seq>.<µs>`)
//! that the subscribers find anywhere in what they receive (inside JSON, RESP, STOMP).
//! Subscribers read until every message has arrived or `settle_ms` after the last
//! publish. Per subscriber: lost, duplicated and out-of-order messages and the first
//! message's latency; in a queue, which consumer got how many (fairness). In the step's
//! RESULT a bus delivery is a "turn": turn and session latency are delivery latency,
//! first-token latency is the first message's.

pub mod link;
pub mod spec;
pub mod tally;

use crate::driver::{DriveOptions, DriveReport, Progress};
use hdrhistogram::Histogram;
use link::Failure;
use spec::{BusSpec, Kind, Role};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use tally::Seen;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::{Duration, Instant};

pub use spec::is_bus;

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 24 * 3_600_000_000, 3).expect("static bounds")
}

/// What every connection of the run shares.
struct Ctx {
    spec: BusSpec,
    address: String,
    port: String,
    allow_remote: bool,
    tag: u32,
    /// What this run's stamps begin with.
    head: Vec<u8>,
    epoch: Instant,
    /// New distinct deliveries so far (to stop waiting once all are in).
    fresh: AtomicU64,
    first_publish: AtomicU64,
    last_publish: AtomicU64,
    last_delivery: AtomicU64,
    progress: Arc<Progress>,
}

impl Ctx {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    fn fill(&self, t: &str, role: &Role, name: &str, index: usize, stamp: &str) -> Vec<u8> {
        let index = index.to_string();
        let vars = [
            ("session", name),
            ("index", index.as_str()),
            ("stamp", stamp),
            ("port", self.port.as_str()),
            ("role", role.name.as_str()),
        ];
        crate::template::render(t, &vars).into_bytes()
    }
}

/// One connection's end.
struct Done {
    name: String,
    seen: Option<Seen>,
    delivery_us: Histogram<u64>,
    published: Option<(u32, u64)>,
    error: Option<Failure>,
}

async fn hello(
    ctx: &Ctx,
    role: &Role,
    name: &str,
    index: usize,
) -> Result<(link::Reader, link::Writer), Failure> {
    let s = &ctx.spec;
    let (r, mut w) = link::open(s.transport, s.framing, &ctx.address, ctx.allow_remote).await?;
    for h in &role.hello {
        w.send(&ctx.fill(h, role, name, index, "")).await?;
    }
    Ok((r, w))
}

async fn wait_ready(ctx: &Ctx, r: &mut link::Reader, want: &str) -> Result<(), Failure> {
    let deadline = Duration::from_millis(ctx.spec.ready_timeout_ms);
    let look = async {
        loop {
            match r.next().await? {
                None => {
                    return Err((
                        "protocol".to_string(),
                        format!("the bus closed the connection before {want:?} came back"),
                    ))
                }
                Some(f) if f.windows(want.len()).any(|w| w == want.as_bytes()) => return Ok(()),
                Some(_) => {}
            }
        }
    };
    tokio::time::timeout(deadline, look).await.map_err(|_| {
        (
            "timeout".to_string(),
            format!(
                "no frame containing {want:?} within ready_timeout_ms = {} after connecting",
                ctx.spec.ready_timeout_ms
            ),
        )
    })?
}

async fn subscriber(
    ctx: Arc<Ctx>,
    role: usize,
    index: usize,
    ready: mpsc::UnboundedSender<bool>,
    mut stop: watch::Receiver<bool>,
) -> Done {
    let r = &ctx.spec.roles[role];
    let name = format!("{}-{index}", r.name);
    let mut done = Done {
        name: name.clone(),
        seen: Some(Seen::default()),
        delivery_us: hist(),
        published: None,
        error: None,
    };
    let opened = async {
        let (mut rd, w) = hello(&ctx, r, &name, index).await?;
        if let Some(want) = &r.ready {
            wait_ready(&ctx, &mut rd, want).await?;
        }
        Ok::<_, Failure>((rd, w))
    };
    let (mut rd, _w) = match opened.await {
        Ok(x) => x,
        Err(e) => {
            // Never subscribed: its failure is the connection's, not messages the bus
            // lost, so it expects none.
            let _ = ready.send(false);
            done.seen = None;
            done.error = Some(e);
            return done;
        }
    };
    let _ = ready.send(true);
    let seen = done.seen.as_mut().expect("set above");
    let mut frames = 0u64;
    loop {
        let frame = tokio::select! {
            _ = stop.changed() => break,
            f = rd.next() => f,
        };
        match frame {
            Ok(Some(f)) => {
                frames += 1;
                let now = ctx.now_us();
                for s in tally::scan_for(&f, &ctx.head) {
                    if let Some(us) = seen.take(s, now) {
                        let _ = done.delivery_us.record(us);
                        ctx.fresh.fetch_add(1, Relaxed);
                        ctx.progress.turns.fetch_add(1, Relaxed);
                        ctx.last_delivery.fetch_max(now, Relaxed);
                    }
                }
            }
            Ok(None) => {
                done.error = Some((
                    "closed".into(),
                    format!("the bus closed {name}'s connection after {frames} frame(s)"),
                ));
                break;
            }
            Err(e) => {
                done.error = Some(e);
                break;
            }
        }
    }
    done
}

/// The signals a publisher waits for and gives.
struct Cue {
    ready: mpsc::UnboundedSender<bool>,
    go: watch::Receiver<bool>,
    /// Its messages written (sent once, when it has written all it will).
    wrote: mpsc::UnboundedSender<u64>,
    stop: watch::Receiver<bool>,
}

async fn publisher(ctx: Arc<Ctx>, role: usize, index: usize, id: u32, mut cue: Cue) -> Done {
    let r = &ctx.spec.roles[role];
    let name = format!("{}-{index}", r.name);
    let mut done = Done {
        name: name.clone(),
        seen: None,
        delivery_us: hist(),
        published: Some((id, 0)),
        error: None,
    };
    let (mut rd, mut w) = match hello(&ctx, r, &name, index).await {
        Ok(x) => x,
        Err(e) => {
            let _ = cue.ready.send(false);
            let _ = cue.wrote.send(0);
            done.error = Some(e);
            return done;
        }
    };
    let _ = cue.ready.send(true);
    // Whatever the bus answers a publisher (acknowledgements, counts) is read and dropped.
    let drain = tokio::spawn(async move { while let Ok(Some(_)) = rd.next().await {} });
    let closed = |drain: &tokio::task::JoinHandle<()>, wrote: u64| {
        drain.is_finished().then(|| {
            (
                "closed".to_string(),
                format!("the bus closed {name}'s connection while it published (after it had written {wrote} message(s))"),
            )
        })
    };
    let _ = cue.go.wait_for(|g| *g).await;
    let start = Instant::now();
    let n = ctx.spec.messages;
    for seq in 0..n {
        if ctx.spec.rate > 0.0 {
            tokio::time::sleep_until(start + Duration::from_secs_f64(seq as f64 / ctx.spec.rate))
                .await;
        }
        let sent = ctx.now_us();
        let stamp = tally::stamp(ctx.tag, id, seq, sent);
        let frame = ctx.fill(&r.send, r, &name, index, &stamp);
        if let Err((kind, m)) = w.send(&frame).await {
            done.error = Some((
                kind,
                format!("{name} could send {seq} of {n} message(s): {m}"),
            ));
            break;
        }
        ctx.first_publish.fetch_min(sent, Relaxed);
        ctx.last_publish.fetch_max(sent, Relaxed);
        done.published = Some((id, seq as u64 + 1));
    }
    let _ = cue.wrote.send(done.published.map_or(0, |p| p.1));
    // Open until the subscribers are done: a bus may drop what a closed connection sent
    // and it had not read yet (Redis does).
    let _ = cue.stop.wait_for(|s| *s).await;
    if done.error.is_none() {
        done.error = closed(&drain, done.published.map_or(0, |p| p.1));
    }
    drop(w);
    drain.abort();
    done
}

/// Runs the bus step `spec` at `opts.concurrency`.
pub async fn drive(
    spec: &BusSpec,
    opts: &DriveOptions,
    progress: Arc<Progress>,
) -> anyhow::Result<DriveReport> {
    if opts.shard.is_some() || opts.resident.is_some() || opts.churn.is_some() {
        anyhow::bail!("a bus step runs in one process: no --shard, --resident or soak churn");
    }
    let port = crate::driver::port_of(&opts.base);
    let ws_base = opts.base.replacen("http://", "ws://", 1);
    let address = crate::template::render(
        &spec.address,
        &[("port", &port), ("base", &opts.base), ("ws_base", &ws_base)],
    );
    link::check(spec.transport, &address, opts.allow_remote)?;
    let tag = (opts.seed as u32)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
    let ctx = Arc::new(Ctx {
        spec: spec.clone(),
        address,
        port,
        allow_remote: opts.allow_remote,
        tag,
        head: tally::head(tag),
        epoch: Instant::now(),
        fresh: AtomicU64::new(0),
        first_publish: AtomicU64::new(u64::MAX),
        last_publish: AtomicU64::new(0),
        last_delivery: AtomicU64::new(0),
        progress: progress.clone(),
    });
    let work = run(ctx.clone(), opts.concurrency);
    let ((dones, lag_us), timed_out) = match tokio::time::timeout(opts.step_timeout, work).await {
        Ok(d) => (d, false),
        Err(_) => ((Vec::new(), hist()), true),
    };
    Ok(report(&ctx, dones, lag_us, timed_out))
}

/// Connects every subscriber, then every publisher, then publishes and waits; the
/// driver's own lag is measured from the first publish to the end (connecting thousands
/// of sockets at once is not what delivery latency is made of). Every task is in a
/// JoinSet: a step that times out drops them, and with them their sockets.
async fn run(ctx: Arc<Ctx>, concurrency: usize) -> (Vec<Done>, Histogram<u64>) {
    let counts = ctx.spec.counts(concurrency);
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = watch::channel(false);
    let (go_tx, go_rx) = watch::channel(false);
    let mut subs = JoinSet::new();
    let mut to_publish = Vec::new();
    for (role, (r, &n)) in ctx.spec.roles.iter().zip(&counts).enumerate() {
        for i in 0..n {
            match r.kind {
                Kind::Subscriber => {
                    subs.spawn(subscriber(
                        ctx.clone(),
                        role,
                        i,
                        ready_tx.clone(),
                        stop_rx.clone(),
                    ));
                }
                Kind::Publisher => to_publish.push((role, i)),
            }
        }
    }
    let mut alive = 0u64;
    for _ in 0..subs.len() {
        alive += u64::from(ready_rx.recv().await.unwrap_or(false));
    }
    let (wrote_tx, mut wrote_rx) = mpsc::unbounded_channel();
    let mut pubs = JoinSet::new();
    for (id, (role, i)) in to_publish.into_iter().enumerate() {
        let cue = Cue {
            ready: ready_tx.clone(),
            go: go_rx.clone(),
            wrote: wrote_tx.clone(),
            stop: stop_rx.clone(),
        };
        pubs.spawn(publisher(ctx.clone(), role, i, id as u32, cue));
    }
    for _ in 0..pubs.len() {
        ready_rx.recv().await;
    }
    let stop_lag = Arc::new(AtomicBool::new(false));
    let mut lag = JoinSet::new();
    lag.spawn(crate::driver::measure_lag(stop_lag.clone()));
    let _ = go_tx.send(true);
    let mut published = 0;
    for _ in 0..pubs.len() {
        published += wrote_rx.recv().await.unwrap_or(0);
    }
    let target = if ctx.spec.queue {
        published
    } else {
        published * alive
    };
    let settle = Instant::now() + Duration::from_millis(ctx.spec.settle_ms);
    while ctx.fresh.load(Relaxed) < target && Instant::now() < settle {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _ = stop_tx.send(true);
    stop_lag.store(true, Relaxed);
    let mut dones = Vec::new();
    while let Some(d) = pubs.join_next().await {
        dones.extend(d.ok());
    }
    while let Some(d) = subs.join_next().await {
        dones.extend(d.ok());
    }
    let lag_us = lag.join_next().await.and_then(Result::ok);
    (dones, lag_us.unwrap_or_else(hist))
}

fn report(ctx: &Ctx, dones: Vec<Done>, lag_us: Histogram<u64>, timed_out: bool) -> DriveReport {
    let publishers = dones
        .iter()
        .filter_map(|d| d.published)
        .map(|(id, _)| id as usize + 1)
        .max()
        .unwrap_or(0);
    let mut published = vec![0u64; publishers];
    for (id, n) in dones.iter().filter_map(|d| d.published) {
        published[id as usize] = n;
    }
    let seen: Vec<Seen> = dones.iter().filter_map(|d| d.seen.clone()).collect();
    let mut delivery = hist();
    for d in &dones {
        let _ = delivery.add(&d.delivery_us);
    }
    let at = |a: &AtomicU64| Some(a.load(Relaxed)).filter(|&v| v != 0 && v != u64::MAX);
    let bus = tally::account(&tally::Run {
        queue: ctx.spec.queue,
        ordered: ctx.spec.ordered,
        transport: ctx.spec.transport.name(),
        published: &published,
        seen: &seen,
        delivery_us: &delivery,
        first_publish_us: at(&ctx.first_publish),
        last_publish_us: at(&ctx.last_publish),
        last_delivery_us: at(&ctx.last_delivery),
    });
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut first_errors = BTreeMap::new();
    let mut failed = std::collections::HashSet::new();
    let total: u64 = published.iter().sum();
    for d in &dones {
        let missed = d
            .seen
            .as_ref()
            .filter(|_| !ctx.spec.queue)
            .map_or(0, |s| total.saturating_sub(s.distinct.len() as u64));
        let error = d.error.clone().or_else(|| {
            (missed > 0).then(|| {
                (
                    "lost".to_string(),
                    format!("{} missed {missed} of {total} message(s)", d.name),
                )
            })
        });
        if let Some((kind, m)) = error {
            *errors.entry(kind.clone()).or_default() += 1;
            first_errors.entry(kind).or_insert(m);
            failed.insert(d.name.clone());
        }
    }
    let n = dones.len() as u64;
    let ok = n - failed.len() as u64;
    ctx.progress.sessions_ok.store(ok, Relaxed);
    ctx.progress
        .sessions_failed
        .store(failed.len() as u64, Relaxed);
    let mut first = hist();
    if let Some(p0) = at(&ctx.first_publish) {
        for f in seen.iter().filter_map(|s| s.first_us) {
            let _ = first.record(f.saturating_sub(p0).max(1));
        }
    }
    DriveReport {
        sessions_ok: ok,
        sessions_failed: failed.len() as u64,
        turns: bus.delivered,
        wall_ms: ctx.epoch.elapsed().as_secs_f64() * 1000.0,
        turn_us: delivery.clone(),
        session_us: delivery,
        session_slow_us: hist(),
        session_others_us: hist(),
        ttft_us: first,
        lag_us,
        errors_by_kind: errors,
        timed_out,
        peak_in_flight: n,
        first_errors,
        full_load: None,
        requests: BTreeMap::new(),
        resident: 0,
        failed_sessions: failed,
        late_start_ms: 0.0,
        sessions_planned: n,
        bus: Some(bus),
    }
}
