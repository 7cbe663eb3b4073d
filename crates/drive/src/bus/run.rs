//! A bus step from start to end: every subscriber connected and ready, then every
//! publisher, then the go; the wait for every message (or the settle time); the lag
//! ticker from the first publish. What one connection does is `peer`'s business.

use super::peer::{publisher, subscriber, Ctx, Cue, Done};
use super::report::report;
use super::tally;
use crate::address::{check, port_of, ws_base};
use crate::hist::hist;
use crate::run::{measure_lag, DriveOptions, DriveReport, Progress};
use crate::spec::{BusSpec, Kind};
use crate::template::render;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::{Duration, Instant};

/// Runs the bus step `spec` at `opts.concurrency`.
pub async fn drive(
    spec: &BusSpec,
    opts: &DriveOptions,
    progress: Arc<Progress>,
) -> anyhow::Result<DriveReport> {
    if opts.shard.is_some() || opts.resident.is_some() || opts.churn.is_some() {
        anyhow::bail!("a bus step runs in one process: no --shard, --resident or soak churn");
    }
    let port = port_of(&opts.base);
    let address = render(
        &spec.address,
        &[
            ("port", &port),
            ("base", &opts.base),
            ("ws_base", &ws_base(&opts.base)),
        ],
    );
    check(spec.transport, &address, opts.allow_remote)?;
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
    lag.spawn(measure_lag(stop_lag.clone()));
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
