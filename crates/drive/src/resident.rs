//! Resident sessions: N sessions opened first (their setup run, their state held in the
//! SUT), then C of them active at a time — each runs its turns once, the next resident
//! taking a freed slot — and every one closed at the end. Between opening and driving the
//! step is told (a hook), so the memory the residents hold can be read apart from what
//! the active ones add.

use crate::driver::{fixed_vars, record_session, DriveOptions, Shared};
use crate::sequence::{self, Ctx, Vars};
use crate::session::SessionSpec;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Called once every resident is open, before any turn (the step reads the SUT's memory).
#[derive(Clone)]
pub struct Hook(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hook")
    }
}

/// How long the SUT is left alone between opening the residents and driving them, so its
/// memory settles and the sampler sees it.
const SETTLE: Duration = Duration::from_millis(600);

fn ctx<'a>(shared: &'a Shared, spec: &SessionSpec, opts: &DriveOptions) -> Ctx<'a> {
    Ctx {
        shared,
        allow_remote: opts.allow_remote,
        timeout_ms: spec.turn_timeout_ms,
    }
}

/// Opens `n` residents, drives them `opts.concurrency` at a time, closes them all.
pub(crate) async fn run(
    spec: Arc<SessionSpec>,
    opts: DriveOptions,
    port: String,
    shared: Arc<Shared>,
    n: usize,
) {
    let slots = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let mut open = JoinSet::new();
    for i in 0..n {
        let (spec, opts, port, shared, slots) = (
            spec.clone(),
            opts.clone(),
            port.clone(),
            shared.clone(),
            slots.clone(),
        );
        open.spawn(async move {
            let _slot = slots.acquire().await;
            let mut vars = Vars::new(opts.seed, i, fixed_vars(i, &opts, &port));
            let c = ctx(&shared, &spec, &opts);
            match sequence::setup(&spec, &mut vars, &mut None, &c).await {
                Ok(()) => Some((i, vars)),
                Err((kind, m)) => {
                    shared.error(kind, format!("session s{i} {m}"));
                    shared.progress.sessions_failed.fetch_add(1, Relaxed);
                    None
                }
            }
        });
    }
    let mut ready: Vec<(usize, Vars)> = open.join_all().await.into_iter().flatten().collect();
    ready.sort_by_key(|(i, _)| *i);
    shared.progress.resident.store(ready.len() as u64, Relaxed);
    tokio::time::sleep(SETTLE).await;
    if let Some(h) = &opts.on_resident {
        (h.0)();
    }
    let queue = Arc::new(Mutex::new(ready.into_iter().collect::<VecDeque<_>>()));
    let done = Arc::new(Mutex::new(Vec::new()));
    let mut workers = JoinSet::new();
    for _ in 0..opts.concurrency.max(1) {
        let (spec, opts, shared, queue, done) = (
            spec.clone(),
            opts.clone(),
            shared.clone(),
            queue.clone(),
            done.clone(),
        );
        workers.spawn(async move {
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some((i, mut vars)) = next else {
                    shared.session_ended(); // a slot runs dry: full load is over
                    return;
                };
                let start = Instant::now();
                let c = ctx(&shared, &spec, &opts);
                let outcome = {
                    let _flight = crate::driver::InFlight::new(&shared.progress);
                    sequence::turns(&spec, &mut vars, &mut None, &c).await
                };
                match outcome {
                    Ok(()) => record_session(&shared, start, false),
                    Err((kind, m)) => {
                        shared.error(kind, format!("session s{i} {m}"));
                        shared.progress.sessions_failed.fetch_add(1, Relaxed);
                    }
                }
                done.lock().unwrap_or_else(|p| p.into_inner()).push(vars);
            }
        });
    }
    workers.join_all().await;
    let opened: Vec<Vars> = std::mem::take(&mut *done.lock().unwrap_or_else(|p| p.into_inner()));
    let mut close = JoinSet::new();
    for mut vars in opened {
        let (spec, opts, shared, slots) =
            (spec.clone(), opts.clone(), shared.clone(), slots.clone());
        close.spawn(async move {
            let _slot = slots.acquire().await;
            let c = ctx(&shared, &spec, &opts);
            sequence::teardown(&spec, &mut vars, &mut None, &c).await;
        });
    }
    close.join_all().await;
}
