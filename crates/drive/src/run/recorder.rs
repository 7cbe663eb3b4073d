//! Where the sessions of a run record what happened to them: turn, session, first-token
//! and per-request latencies in HDR histograms (microseconds), errors by kind with the
//! first message of each, the failed sessions' names, and the notes that find the span
//! of full load; the ticker that measures the driver's own scheduling lag, so a run can
//! tell when the harness was the bottleneck; and the report made of them at the end.
//! Deciding when a turn or a session is done is the runners' business.

use super::failure::{Failure, Tally};
use super::load::Load;
use super::progress::Progress;
use super::report::{DriveReport, RequestStats};
use crate::hist::hist;
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Everything the sessions of one run record, shared by all of them.
pub(crate) struct Recorder {
    turn: Mutex<Histogram<u64>>,
    session: Mutex<Histogram<u64>>,
    session_slow: Mutex<Histogram<u64>>,
    session_others: Mutex<Histogram<u64>>,
    ttft: Mutex<Histogram<u64>>,
    /// Turns apart by where they fall in their session: the first (a cold start shows
    /// here) and the rest.
    first_turn: Mutex<Histogram<u64>>,
    later_turn: Mutex<Histogram<u64>>,
    think_late: Mutex<Histogram<u64>>,
    /// A replay's session times by name (its sessions differ: inflation is per session).
    session_times: Mutex<BTreeMap<String, f64>>,
    errors: Mutex<Tally>,
    requests: Mutex<BTreeMap<String, RequestStats>>,
    failed: Mutex<HashSet<String>>,
    /// Sessions that failed in their setup requests, before any turn.
    failed_in_setup: std::sync::atomic::AtomicU64,
    pub(crate) progress: Arc<Progress>,
    pub(crate) t0: Instant,
    load: Load,
    /// Sessions end all the time under churn: only a slot's last one ends full load.
    churn: bool,
    /// A step of voice calls: what they add up to.
    pub(crate) voice: Option<super::VoiceTally>,
}

impl Recorder {
    /// A record that starts now.
    pub(crate) fn new(progress: Arc<Progress>, churn: bool) -> Recorder {
        Recorder {
            turn: Mutex::new(hist()),
            session: Mutex::new(hist()),
            session_slow: Mutex::new(hist()),
            session_others: Mutex::new(hist()),
            ttft: Mutex::new(hist()),
            first_turn: Mutex::new(hist()),
            later_turn: Mutex::new(hist()),
            think_late: Mutex::new(hist()),
            session_times: Mutex::new(BTreeMap::new()),
            errors: Mutex::new(Tally::default()),
            requests: Mutex::new(BTreeMap::new()),
            failed: Mutex::new(Default::default()),
            failed_in_setup: Default::default(),
            progress,
            t0: Instant::now(),
            load: Load::default(),
            churn,
            voice: None,
        }
    }

    /// Turn number `turn` (from 1) of its session, begun at `began`, completed now;
    /// `first` is its first token (streams).
    pub(crate) fn turn_done(&self, turn: u32, began: Instant, first: Option<Instant>, slow: bool) {
        if slow {
            // A slow consumer's turn is slow on purpose: counted, not timed with the rest.
            self.progress.turns.fetch_add(1, Relaxed);
            return;
        }
        self.turn_ended(turn, began, first, Instant::now());
    }

    /// A turn that ended at `end` (a call's: when the bot's reply finished playing).
    pub(crate) fn turn_ended(
        &self,
        turn: u32,
        began: Instant,
        first: Option<Instant>,
        end: Instant,
    ) {
        let took = end.saturating_duration_since(began);
        record(&self.turn, took);
        match turn {
            1 => record(&self.first_turn, took),
            _ => record(&self.later_turn, took),
        }
        if let Some(f) = first {
            record(&self.ttft, f.duration_since(began));
        }
        self.progress.turns.fetch_add(1, Relaxed);
        self.progress.turn_timed(took);
        self.load.turn_done(began - self.t0, self.t0.elapsed());
    }

    /// A replayed pause that was meant to last `meant` ended after `took`.
    pub(crate) fn think_done(&self, meant: Duration, took: Duration) {
        record(&self.think_late, took.saturating_sub(meant));
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

    /// A session that went through, timed from `start`.
    pub(crate) fn session_ok(&self, start: Instant, slow: bool) {
        // Slow consumers are slow on purpose: kept out of the step's own session times
        // (budgets, inflation), in a histogram of their own.
        if slow {
            record(&self.session_slow, start.elapsed());
        } else {
            record(&self.session, start.elapsed());
            record(&self.session_others, start.elapsed());
        }
        self.progress.sessions_ok.fetch_add(1, Relaxed);
    }

    /// A replayed session's time, by its name.
    pub(crate) fn session_time(&self, name: &str, took: Duration) {
        self.session_times
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), took.as_secs_f64() * 1000.0);
    }

    /// The session named `name` failed: what it asked of the provider is not what a
    /// whole session asks.
    pub(crate) fn session_failed(&self, name: String) {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name);
    }

    /// A session failed in its setup requests, before its first turn.
    pub(crate) fn failed_in_setup(&self) {
        self.failed_in_setup.fetch_add(1, Relaxed);
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

    pub(crate) fn error(&self, f: Failure) {
        self.errors.lock().unwrap_or_else(|p| p.into_inner()).add(f);
    }
}

fn record(h: &Mutex<Histogram<u64>>, d: Duration) {
    let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
    let _ = h.record((d.as_micros() as u64).max(1));
}

impl Recorder {
    /// The report from what the sessions recorded; `lag` stops now.
    pub(crate) async fn report(&self, lag: Lag, timed_out: bool) -> DriveReport {
        let wall_ms = self.t0.elapsed().as_secs_f64() * 1000.0;
        let lag_us = lag.stop().await;
        let take = |m: &Mutex<Histogram<u64>>| m.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let (errors_by_kind, first_errors, first_bodies) = self
            .errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .parts();
        let progress = &self.progress;
        let (voice, voice_parts) = match self.voice.as_ref().map(|t| t.figures_and_parts()) {
            Some((v, parts)) => (Some(v), Some(parts)),
            None => (None, None),
        };
        DriveReport {
            sessions_ok: progress.sessions_ok.load(Relaxed),
            sessions_failed: progress.sessions_failed.load(Relaxed),
            turns: progress.turns.load(Relaxed),
            wall_ms,
            turn_us: take(&self.turn),
            session_us: take(&self.session),
            session_slow_us: take(&self.session_slow),
            session_others_us: take(&self.session_others),
            ttft_us: take(&self.ttft),
            first_turn_us: take(&self.first_turn),
            later_turn_us: take(&self.later_turn),
            lag_us,
            errors_by_kind,
            timed_out,
            first_errors,
            first_bodies,
            sessions_failed_in_setup: self.failed_in_setup.load(Relaxed),
            peak_in_flight: progress.peak_in_flight.load(Relaxed),
            full_load: self.load.full_load(),
            requests,
            resident: progress.resident.load(Relaxed),
            failed_sessions: std::mem::take(
                &mut *self.failed.lock().unwrap_or_else(|p| p.into_inner()),
            ),
            late_start_ms: 0.0,
            sessions_planned: progress.sessions_ok.load(Relaxed)
                + progress.sessions_failed.load(Relaxed),
            bus: None,
            think_late_us: take(&self.think_late),
            session_ms: std::mem::take(
                &mut *self.session_times.lock().unwrap_or_else(|p| p.into_inner()),
            ),
            voice,
            voice_parts,
        }
    }
}

/// The driver's lag ticker while it runs.
pub(crate) struct Lag {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Histogram<u64>>,
}

impl Lag {
    pub(crate) fn start() -> Lag {
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(measure_lag(stop.clone()));
        Lag { stop, task }
    }

    /// Stops the ticker; what it measured.
    async fn stop(self) -> Histogram<u64> {
        self.stop.store(true, Relaxed);
        self.task.await.unwrap_or_else(|_| hist())
    }
}

/// How late a 25 ms ticker wakes, until `stop`: the driver's own scheduling lag. Every
/// tick wakes an idle driver (a SUT that waits leaves it idle most of the time), so it
/// ticks no faster than its p99 needs: 40 a second, 2,400 in a minute's step.
pub(crate) async fn measure_lag(stop: Arc<AtomicBool>) -> Histogram<u64> {
    let mut h = hist();
    let tick = Duration::from_millis(25);
    while !stop.load(Relaxed) {
        let due = Instant::now() + tick;
        tokio::time::sleep_until(due).await;
        let _ = h.record((Instant::now().saturating_duration_since(due).as_micros() as u64).max(1));
    }
    h
}
