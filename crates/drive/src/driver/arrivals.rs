//! When each session starts: all at once (closed model), session `i` at `i × interval`
//! (open model, its latency counted from that intended start so a late start is not
//! hidden), or churn — each slot running session after session until the soak ends.
//! Sessions still running at the step timeout are abandoned and counted as failed. What
//! one session does is `session`'s business.

use super::session::run_session;
use crate::address::in_shard;
use crate::run::Failure;
use crate::run::{DriveOptions, Recorder};
use crate::spec::SessionSpec;
use anyhow::bail;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Sessions in a row a churn slot may fail before it stops.
const CHURN_GIVE_UP: u32 = 20;

/// Closed or open model: every session of this shard started on time, then waited for
/// until the step timeout. Whether it timed out.
pub(super) async fn arrive(
    spec: Arc<SessionSpec>,
    opts: &DriveOptions,
    port: String,
    rec: Arc<Recorder>,
    interval: Option<Duration>,
) -> anyhow::Result<bool> {
    let t0 = rec.t0;
    let spawner = {
        let (spec, rec, opts) = (spec.clone(), rec.clone(), opts.clone());
        async move {
            let mut tasks = JoinSet::new();
            for i in (0..opts.concurrency).filter(|i| in_shard(*i, opts.shard)) {
                // Closed model: everyone starts now. Open model: session i is due at i × interval.
                // An exact replay: when the recorded session started (time-scaled).
                let recorded = opts.replay.as_ref().and_then(|r| r.start_ms(i));
                let intended = match recorded {
                    Some(ms) => t0 + Duration::from_secs_f64(ms / 1000.0),
                    None => interval.map_or(t0, |iv| t0 + iv * i as u32),
                };
                tokio::time::sleep_until(intended).await;
                let (spec, rec, opts, port) =
                    (spec.clone(), rec.clone(), opts.clone(), port.clone());
                tasks.spawn(
                    async move { run_session(i, intended, &spec, &opts, &port, &rec).await },
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
    loop {
        match tokio::time::timeout_at(deadline, tasks.join_next()).await {
            Ok(Some(_)) => {}
            Ok(None) => return Ok(false),
            Err(_) => {
                abandon(&mut tasks, &rec, |left| {
                    format!(
                        "{} still running when the step timeout of {:.0} s ran out",
                        result::words::count(left, "session"),
                        opts.step_timeout.as_secs_f64()
                    )
                });
                return Ok(true);
            }
        }
    }
}

/// Churn (a soak): each of `concurrency` slots runs sessions until `for_how_long` after
/// the start. Whether the step timed out.
pub(super) async fn churn(
    spec: Arc<SessionSpec>,
    opts: &DriveOptions,
    port: String,
    rec: Arc<Recorder>,
    for_how_long: Duration,
) -> bool {
    let until = rec.t0 + for_how_long;
    let mut slots = JoinSet::new();
    for slot in 0..opts.concurrency {
        let (spec, rec, opts, port) = (spec.clone(), rec.clone(), opts.clone(), port.clone());
        slots.spawn(async move { run_slot(slot, until, &spec, &opts, &port, &rec).await });
    }
    // `step_timeout` already holds the soak's duration and the time its last sessions get.
    let deadline = rec.t0 + opts.step_timeout;
    let timed_out = tokio::time::timeout_at(deadline, async {
        while slots.join_next().await.is_some() {}
    })
    .await
    .is_err();
    if timed_out {
        abandon(&mut slots, &rec, |left| {
            format!(
                "{} still running when the step timeout ran out after the soak",
                result::words::count(left, "session")
            )
        });
    }
    timed_out
}

/// One churn slot: a new session (new name, nonce, ids) as soon as the last ends.
async fn run_slot(
    slot: usize,
    until: Instant,
    spec: &SessionSpec,
    opts: &DriveOptions,
    port: &str,
    rec: &Recorder,
) {
    let (mut k, mut failed_in_a_row) = (0, 0u32);
    while Instant::now() < until {
        let i = slot + k * opts.concurrency;
        let ok = run_session(i, Instant::now(), spec, opts, port, rec).await;
        k += 1;
        failed_in_a_row = if ok { 0 } else { failed_in_a_row + 1 };
        if failed_in_a_row >= CHURN_GIVE_UP {
            // The SUT is gone or broken: hours of instant failures tell nothing more.
            rec.error(Failure::new(
                "gave_up",
                format!("a slot stopped after {CHURN_GIVE_UP} sessions in a row failed"),
            ));
            break;
        }
        if failed_in_a_row > 0 {
            let pause = 100 * u64::from(failed_in_a_row);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }
    rec.slot_done();
}

/// The sessions still running at the step timeout: stopped, counted as failed, and one
/// `timeout` error saying how many.
fn abandon<T: 'static>(
    tasks: &mut JoinSet<T>,
    rec: &Recorder,
    message: impl FnOnce(u64) -> String,
) {
    let left = tasks.len() as u64;
    tasks.abort_all();
    rec.progress.sessions_failed.fetch_add(left, Relaxed);
    rec.error(Failure::new("timeout", message(left)));
}
