//! A bus step's report: what every connection saw added up into the account (`tally`),
//! each connection that failed or missed messages counted as a failed session, and the
//! step's latencies read as a request/reply step's are (a delivery is a turn, the first
//! message is the first token). Running the connections is `run`'s and `peer`'s business.

use super::peer::{Ctx, Done};
use super::tally::{self, Seen};
use crate::hist::hist;
use crate::run::failure::{Failure, Tally};
use crate::run::DriveReport;
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The errors of a step, and the names that failed.
type Errors = (Tally, HashSet<String>);

pub(super) fn report(
    ctx: &Ctx,
    dones: Vec<Done>,
    lag_us: Histogram<u64>,
    timed_out: bool,
) -> DriveReport {
    let published = published(&dones);
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
    let (tally, failed) = errors(ctx, &dones, published.iter().sum());
    let (errors, first_errors, first_bodies) = tally.parts();
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
        voice: None,
        voice_parts: None,
        think_late_us: hist(),
        session_ms: Default::default(),
        sessions_ok: ok,
        sessions_failed: failed.len() as u64,
        turns: bus.delivered,
        wall_ms: ctx.epoch.elapsed().as_secs_f64() * 1000.0,
        turn_us: delivery.clone(),
        session_us: delivery,
        session_slow_us: hist(),
        session_others_us: hist(),
        ttft_us: first,
        first_turn_us: hist(),
        later_turn_us: hist(),
        lag_us,
        errors_by_kind: errors,
        timed_out,
        peak_in_flight: n,
        first_errors,
        first_bodies,
        sessions_failed_in_setup: 0,
        full_load: None,
        requests: BTreeMap::new(),
        resident: 0,
        failed_sessions: failed,
        late_start_ms: 0.0,
        sessions_planned: n,
        bus: Some(bus),
    }
}

/// Messages each publisher wrote, by its id (publishers counted by their highest id).
fn published(dones: &[Done]) -> Vec<u64> {
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
    published
}

/// Each connection's error, or (fanout) the messages it missed of the `total` written.
fn errors(ctx: &Ctx, dones: &[Done], total: u64) -> Errors {
    let mut tally = Tally::default();
    let mut failed = HashSet::new();
    for d in dones {
        let missed = d
            .seen
            .as_ref()
            .filter(|_| !ctx.spec.queue)
            .map_or(0, |s| total.saturating_sub(s.distinct.len() as u64));
        let error = d.error.clone().or_else(|| {
            (missed > 0).then(|| {
                Failure::new(
                    "lost",
                    format!(
                        "{} missed {missed} of {}",
                        d.name,
                        result::words::count(total, "message")
                    ),
                )
            })
        });
        if let Some(f) = error {
            tally.add(f);
            failed.insert(d.name.clone());
        }
    }
    (tally, failed)
}
