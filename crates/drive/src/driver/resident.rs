//! Resident sessions: N sessions opened first (their setup run, their state held in the
//! SUT), then C of them active at a time — each runs its turns once, the next resident
//! taking a freed slot — and every one closed at the end. Between opening and driving the
//! step is told (a hook), so the memory the residents hold can be read apart from what
//! the active ones add.

use super::sequence;
use super::vars::{fixed_vars, Vars};
use crate::run::Ctx;
use crate::run::Failure;
use crate::run::{DriveOptions, InFlight, Recorder};
use crate::spec::SessionSpec;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// How long the SUT is left alone between opening the residents and driving them, so its
/// memory settles and the sampler sees it.
const SETTLE: Duration = Duration::from_millis(600);

fn ctx<'a>(recorder: &'a Recorder, spec: &SessionSpec, opts: &'a DriveOptions) -> Ctx<'a> {
    Ctx {
        recorder,
        allow_remote: opts.allow_remote,
        timeout_ms: spec.turn_timeout_ms,
        voice_owner: opts.voice_owner.as_ref(),
    }
}

/// [`run`] within the step timeout; whether it ran out.
pub(super) async fn drive(
    spec: Arc<SessionSpec>,
    opts: &DriveOptions,
    port: String,
    recorder: Arc<Recorder>,
    n: usize,
) -> bool {
    let deadline = recorder.t0 + opts.step_timeout;
    let run = run(spec, opts.clone(), port, recorder.clone(), n);
    let timed_out = tokio::time::timeout_at(deadline, run).await.is_err();
    if timed_out {
        recorder.error(Failure::new(
            "timeout",
            format!(
                "the resident sessions were still running when the step timeout of {:.0} s ran out",
                opts.step_timeout.as_secs_f64()
            ),
        ));
    }
    timed_out
}

/// Opens `n` residents, drives them `opts.concurrency` at a time, closes them all.
async fn run(
    spec: Arc<SessionSpec>,
    opts: DriveOptions,
    port: String,
    recorder: Arc<Recorder>,
    n: usize,
) {
    let slots = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let ready = open(&spec, &opts, &port, &recorder, &slots, n).await;
    recorder
        .progress
        .resident
        .store(ready.len() as u64, Relaxed);
    tokio::time::sleep(SETTLE).await;
    if let Some(h) = &opts.on_resident {
        (h.0)();
    }
    let opened = turns(&spec, &opts, &recorder, ready).await;
    let mut close = JoinSet::new();
    for mut vars in opened {
        let (spec, opts, recorder, slots) =
            (spec.clone(), opts.clone(), recorder.clone(), slots.clone());
        close.spawn(async move {
            let _slot = slots.acquire().await;
            let c = ctx(&recorder, &spec, &opts);
            sequence::teardown(&spec, &mut vars, &mut None, &c).await;
        });
    }
    close.join_all().await;
}

/// Every resident's setup, `slots` at a time: those that opened, in order.
async fn open(
    spec: &Arc<SessionSpec>,
    opts: &DriveOptions,
    port: &str,
    recorder: &Arc<Recorder>,
    slots: &Arc<Semaphore>,
    n: usize,
) -> Vec<(usize, Vars)> {
    let mut open = JoinSet::new();
    for i in 0..n {
        let (spec, opts, port, recorder, slots) = (
            spec.clone(),
            opts.clone(),
            port.to_string(),
            recorder.clone(),
            slots.clone(),
        );
        open.spawn(async move {
            let _slot = slots.acquire().await;
            let mut vars = Vars::new(opts.seed, &opts.name_prefix, i, fixed_vars(i, &opts, &port));
            let c = ctx(&recorder, &spec, &opts);
            match sequence::setup(&spec, &mut vars, &mut None, &c).await {
                Ok(()) => Some((i, vars)),
                Err(f) => {
                    recorder.error(f.said(|m| format!("session {}s{i} {m}", opts.name_prefix)));
                    recorder.progress.sessions_failed.fetch_add(1, Relaxed);
                    None
                }
            }
        });
    }
    let mut ready: Vec<(usize, Vars)> = open.join_all().await.into_iter().flatten().collect();
    ready.sort_by_key(|(i, _)| *i);
    ready
}

/// The residents' turns, `opts.concurrency` workers taking the next resident as each
/// finishes one; every resident's values afterwards, to close it with.
async fn turns(
    spec: &Arc<SessionSpec>,
    opts: &DriveOptions,
    recorder: &Arc<Recorder>,
    ready: Vec<(usize, Vars)>,
) -> Vec<Vars> {
    let queue = Arc::new(Mutex::new(ready.into_iter().collect::<VecDeque<_>>()));
    let done = Arc::new(Mutex::new(Vec::new()));
    let mut workers = JoinSet::new();
    for _ in 0..opts.concurrency.max(1) {
        let (spec, opts, recorder, queue, done) = (
            spec.clone(),
            opts.clone(),
            recorder.clone(),
            queue.clone(),
            done.clone(),
        );
        workers.spawn(async move {
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some((i, mut vars)) = next else {
                    recorder.session_ended(); // a slot runs dry: full load is over
                    return;
                };
                let start = Instant::now();
                let c = ctx(&recorder, &spec, &opts);
                let outcome = {
                    let _flight = InFlight::new(&recorder.progress);
                    sequence::turns(&spec, &mut vars, &mut None, &c).await
                };
                match outcome {
                    Ok(()) => recorder.session_ok(start, false),
                    Err(f) => {
                        recorder.error(f.said(|m| format!("session {}s{i} {m}", opts.name_prefix)));
                        recorder.progress.sessions_failed.fetch_add(1, Relaxed);
                    }
                }
                done.lock().unwrap_or_else(|p| p.into_inner()).push(vars);
            }
        });
    }
    workers.join_all().await;
    let mut opened = done.lock().unwrap_or_else(|p| p.into_inner());
    std::mem::take(&mut *opened)
}
