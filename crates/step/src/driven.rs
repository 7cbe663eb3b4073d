//! A step whose sessions Plimsoll drives: the SUT started under its cap on its cores,
//! watched (process tree, CPU pressure, run-queue wait, the responsiveness probe, a
//! soak's series, live progress), the sessions driven, the SUT stopped, and what was
//! measured handed to the judge. One function a phase.

use crate::fleet::Fleet;
use crate::judge::judge;
use crate::measured::{Latencies, Measured};
use crate::options::StepOptions;
use crate::own_cpu::Snapshot;
use crate::rig::Rig;
use anyhow::Context;
use drive::{drive, DriveOptions, DriveReport, Progress, SessionSpec};
use experiment::{Config, ReadyKind};
use hdrhistogram::Histogram;
use probe::{Ready, Sampler, SutSpec};
use result::{round2, StepReport};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn ms_q(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| round2(h.value_at_quantile(q) as f64 / 1000.0))
}

/// The SUT's cap for this step, and where its CPU pressure is read: its own cgroup's
/// when it has one (v2), else the machine's.
struct Capped {
    cap: Option<cap::Cap>,
    psi: (PathBuf, &'static str),
    psi0: Option<u64>,
}

fn capped(opts: &StepOptions, concurrency: usize) -> Capped {
    let sut_cores = opts
        .partition
        .as_ref()
        .map_or(Vec::new(), |p| p.sut.clone());
    let cap = opts
        .cap
        .map(|c| cap::Cap::create_on(c, &format!("c{concurrency}"), &sut_cores));
    let psi = cap
        .as_ref()
        .and_then(|c| c.pressure_file())
        .map(|f| (f, "cgroup"))
        .unwrap_or_else(|| ("/proc/pressure/cpu".into(), "system"));
    if let Some(w) = cap.as_ref().and_then(|c| c.warning()) {
        eprintln!("{w}");
    }
    let psi0 = probe::pressure::some_total_us(&psi.0);
    Capped { cap, psi, psi0 }
}

/// How to start the SUT: its command (in its cap), environment, readiness, cores.
fn sut_spec(cfg: &Config, opts: &StepOptions, rig: &Rig, cap: Option<&cap::Cap>) -> SutSpec {
    let (words, _) = cfg.sut_command();
    let command: Vec<String> = words.iter().map(|c| rig.fill(c)).collect();
    let base = rig.base();
    SutSpec {
        command: cap.map_or(command.clone(), |c| c.wrap(&command)),
        env: rig.env.clone(),
        cwd: Some(cfg.cwd.clone()),
        ready: match &cfg.ready {
            ReadyKind::Http(path) => Ready::Http(format!("{base}{path}")),
            ReadyKind::Port => Ready::Port(rig.port),
            ReadyKind::Log(t) => Ready::Log(t.clone()),
        },
        ready_timeout: Duration::from_secs_f64(cfg.ready_timeout_s),
        stop_grace: Duration::from_secs_f64(cfg.stop_grace_s),
        // The cores its cap holds it to (ceil(cpus) of its own for a cpuset), else its part.
        cores: {
            let part = opts
                .partition
                .as_ref()
                .map_or(Vec::new(), |p| p.sut.clone());
            match opts.cap {
                Some(c) => cap::cores_for(&c, &part),
                None => part,
            }
        },
        log_pattern: cfg.log_pattern.clone(),
        role: probe::Role::Sut,
    }
}

/// What watches the SUT while the sessions run, beside the sampler.
struct Watchers {
    progress: Arc<Progress>,
    responsive: Option<crate::responsive::Probe>,
    series: Option<tokio::task::JoinHandle<()>>,
    /// (draining, stop) for a soak's series.
    soak: (Arc<AtomicBool>, Arc<AtomicBool>),
    live: Option<crate::live::Live>,
    board: Option<crate::feed::Feed>,
}

fn watch(
    opts: &StepOptions,
    cfg: &Config,
    rig: &Rig,
    sut: &Fleet,
    sampler: &Arc<Sampler>,
) -> Watchers {
    let progress = Arc::new(Progress::default());
    let soak = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let responsive = opts
        .probe_path
        .clone()
        .or(cfg.probe_path.clone())
        .map(|p| crate::responsive::Probe::start(([127, 0, 0, 1], rig.port).into(), p));
    let series = opts.soak.as_ref().map(|plan| {
        crate::soak::series(
            sut.pid(),
            plan,
            progress.clone(),
            responsive.as_ref().map(|p| p.window()),
            (soak.0.clone(), soak.1.clone()),
        )
    });
    let live = crate::live::start(
        opts.progress,
        rig.concurrency,
        progress.clone(),
        sampler.clone(),
    );
    let board = opts.on_tick.clone().map(|on_tick| {
        crate::feed::start(crate::feed::Sources {
            on_tick,
            progress: progress.clone(),
            sampler: Some(sampler.clone()),
            // A soak's series takes the probe's slowest answer itself: the view only reads it.
            probe: responsive
                .as_ref()
                .map(|p| (p.window(), opts.soak.is_none())),
        })
    });
    Watchers {
        progress,
        responsive,
        series,
        soak,
        live,
        board,
    }
}

fn drive_options(
    cfg: &Config,
    opts: &StepOptions,
    rig: &Rig,
    sut: &Fleet,
    sampler: &Arc<Sampler>,
) -> DriveOptions {
    let resident = opts.resident.or(cfg.resident);
    let rate = opts.rate.or(cfg.arrival_rate);
    DriveOptions {
        concurrency: rig.concurrency,
        base: rig.base(),
        replicas: match sut.len() {
            1 => Vec::new(),
            _ => sut.bases.clone(),
        },
        seed: cfg.seed,
        step_timeout: Duration::from_secs_f64(cfg.timeout_s)
            + opts.soak.as_ref().map_or(Duration::ZERO, |s| s.duration),
        allow_remote: opts.allow_remote,
        arrival_rate: rate,
        churn: opts
            .soak
            .as_ref()
            .filter(|_| rate.is_none())
            .map(|s| s.duration),
        resident,
        slow: opts.slow.or(cfg.slow).filter(|(share, _)| *share > 0.0),
        on_resident: resident.map(|_| {
            let s = sampler.clone();
            drive::Hook(Arc::new(move || s.mark()))
        }),
        shard: None,
        start_at: None,
        name_prefix: step_tag(),
        replay: rig.replay.clone(),
        services: rig.deps.ports(),
        voice_owner: Some(crate::owner::of_app(&rig.mock.app)),
        keep_audio: keep_audio(cfg, opts, rig.concurrency),
    }
}

/// Whose calls' audio the step keeps, and where: `--keep-audio DIR`, or a folder of the
/// step's own under `.plimsoll/audio` (made only when a call is kept).
fn keep_audio(
    cfg: &Config,
    opts: &StepOptions,
    concurrency: usize,
) -> Option<drive::run::KeepAudio> {
    let all = match cfg.keep_audio {
        experiment::KeepAudio::None => return None,
        which => which == experiment::KeepAudio::All,
    };
    let dir = opts.keep_audio_dir.clone().unwrap_or_else(|| {
        let stamp = crate::clock::now_rfc3339().replace(':', "-");
        std::path::Path::new(".plimsoll/audio").join(format!("{stamp}-c{concurrency}"))
    });
    Some(drive::run::KeepAudio {
        dir,
        all,
        calls: cfg.keep_audio_calls,
        budget: drive::run::KeepAudio::BUDGET,
    })
}

/// A tag of this step for its sessions' names (`3f9a1c-s0`): a SUT whose store outlives
/// the step (a database of the user's own, a re-run of the same level) never sees one
/// session name twice, and so never mixes two steps' conversations.
fn step_tag() -> String {
    use std::hash::{BuildHasher, Hasher};
    static STEPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(STEPS.fetch_add(1, Relaxed));
    h.write_u32(std::process::id());
    format!("{:06x}-", h.finish() & 0xff_ffff)
}

/// When the sessions were driven, on the sampler's clock, and what the SUT's threads
/// waited for a CPU meanwhile.
struct Window {
    offset_s: f64,
    end_s: f64,
    sched_delay_ms_per_s: f64,
}

pub(crate) async fn run(
    cfg: &Config,
    opts: &StepOptions,
    mut rig: Rig,
    session: &SessionSpec,
) -> anyhow::Result<StepReport> {
    let mut capped = capped(opts, rig.concurrency);
    let spec = sut_spec(cfg, opts, &rig, capped.cap.as_ref());
    let (_, processes) = cfg.sut_command();
    let mut sut = Fleet::start(&spec, rig.port, processes)
        .await
        .with_context(|| format!("starting the SUT from {}", cfg.file.display()))?;
    let sample_every = Duration::from_millis(cfg.sample_ms);
    let sampler = Arc::new(Sampler::start_on(sut.pid(), sut.pids(), sample_every));
    rig.deps.sample(cfg, sample_every, sampler.started());
    let stdio = crate::mcp_side::watch_stdio(&rig.mock.app, sut.pids(), sut.pid(), sample_every);
    let own0 = Snapshot::take(&rig.mock.app);
    let w = watch(opts, cfg, &rig, &sut, &sampler);
    let _stop_series = crate::soak::StopOnDrop(w.soak.1.clone());
    let mut opts_d = drive_options(cfg, opts, &rig, &sut, &sampler);
    let offset_s = sampler.started().elapsed().as_secs_f64();
    let t_drive = Instant::now();
    let all_pids = sut.pids();
    let wait0 = probe::tree::run_queue_wait_ns(&all_pids());
    let driven = drive(session, &opts_d, w.progress.clone()).await;
    let secs = t_drive.elapsed().as_secs_f64().max(1e-3);
    let wait = probe::tree::run_queue_wait_ns(&all_pids()).saturating_sub(wait0);
    let window = Window {
        offset_s,
        end_s: offset_s + t_drive.elapsed().as_secs_f64(),
        sched_delay_ms_per_s: round2(wait as f64 / 1e6 / secs),
    };
    opts_d.on_resident = None; // its hold on the sampler, so it can be finished below
    let probe_answers = wind_down(opts, w).await;
    // Over the driving and a soak's drain alike: the pressure is read after both.
    let pressure = match (capped.psi0, probe::pressure::some_total_us(&capped.psi.0)) {
        (Some(a), Some(b)) => Some((
            b.saturating_sub(a) as f64 / t_drive.elapsed().as_micros().max(1) as f64,
            capped.psi.1,
        )),
        _ => None,
    };
    let own = Snapshot::take(&rig.mock.app);
    let probe = Arc::try_unwrap(sampler)
        .map(Sampler::finish)
        .unwrap_or_else(|s| s.summary());
    let stdio = stdio.map(Sampler::finish);
    let died = sut.exited();
    let throttled = capped.cap.as_ref().and_then(|c| c.cpu_throttled());
    let stopped = sut.stop().await;
    if let Some(c) = capped.cap.as_mut() {
        c.remove();
    }
    let report = driven?;
    let think_late = report.think_late_us.clone();
    let mut m = measured(report, session, &opts_d, opts, &capped, window);
    own0.charge(&own, &mut m);
    m.throttled = throttled;
    m.pressure = pressure;
    m.probe = probe_answers;
    m.shared = session
        .shared_values()
        .iter()
        .map(|v| v.to_string())
        .collect();
    let replayed = rig
        .replay
        .as_ref()
        .zip(rig.mock.app.replay.as_ref())
        .map(|(r, mock)| crate::replayed::figures(r, &mock.played(), &think_late));
    m.mcp_stdio = stdio.and_then(|s| {
        let seen = rig.mock.app.mcp.ledger.stdio_pids().len() as u64;
        crate::mcp_side::stdio_figures(&s, rig.concurrency, seen)
    });
    let mut report = judge(cfg, rig, probe, died, stopped, m).await;
    report.result.workload = replayed;
    Ok(report)
}

/// After the sessions: a soak's drain (no load, the series still running, to see what
/// comes back), the responsiveness probe's answers, the live line gone.
async fn wind_down(opts: &StepOptions, w: Watchers) -> Option<(f64, f64, u64)> {
    if let (Some(plan), Some(task)) = (&opts.soak, w.series) {
        w.soak.0.store(true, Relaxed);
        tokio::time::sleep(plan.drain).await;
        w.soak.1.store(true, Relaxed);
        let _ = task.await;
    }
    let answers = match w.responsive {
        Some(p) => p.finish().await,
        None => None,
    };
    // Both hold the sampler: stopped and awaited, so it can be finished for its last sample.
    if let Some(l) = w.live {
        l.finish().await;
    }
    if let Some(b) = w.board {
        b.stop().await;
    }
    answers
}

/// What the sessions' side measured, from the driver's report.
fn measured(
    report: DriveReport,
    session: &SessionSpec,
    opts_d: &DriveOptions,
    opts: &StepOptions,
    capped: &Capped,
    window: Window,
) -> Measured {
    let think_per_session = match &opts_d.replay {
        Some(r) => crate::replayed::think_per_session(r, opts_d.concurrency),
        None => session.think_ms * session.turns.saturating_sub(1) as f64,
    };
    Measured {
        sessions_ok: report.sessions_ok,
        sessions_failed: report.sessions_failed,
        turns: report.turns,
        wall_ms: report.wall_ms,
        lat: Latencies {
            p50_session: ms_q(&report.session_us, 0.5),
            p99_session: ms_q(&report.session_us, 0.99),
            p50_turn: ms_q(&report.turn_us, 0.5),
            p99_turn: ms_q(&report.turn_us, 0.99),
            p50_ttft: ms_q(&report.ttft_us, 0.5),
            p99_ttft: ms_q(&report.ttft_us, 0.99),
        },
        think_ms_per_session: think_per_session,
        think_ms_per_turn: think_per_session / session.turns.max(1) as f64,
        lag_p99_ms: round2(
            (report.lag_us.value_at_quantile(0.99) as f64 / 1000.0)
                .max(report.voice.as_ref().map_or(0.0, |v| v.frame_jitter_p99_ms)),
        ),
        timed_out: report.timed_out,
        first_errors: report.first_errors.clone().into_iter().collect(),
        first_bodies: report.first_bodies.clone(),
        sessions_failed_in_setup: report.sessions_failed_in_setup,
        failed_sessions: report.failed_sessions.clone(),
        session_ms: report.session_ms.clone(),
        open_model: opts_d.arrival_rate.map(|r| (r, report.peak_in_flight)),
        cap: capped
            .cap
            .as_ref()
            .map(|c| (c.method, c.spec, c.on().to_string())),
        partition: opts.partition.clone().map(|p| {
            let held = capped.cap.as_ref().is_some_and(|c| c.cpuset);
            (p, if held { "cpuset" } else { "affinity" })
        }),
        // The harness's lag: its ticker's, or a voice call's frames sent late.
        voice: report.voice.clone(),
        full_load: report.full_load.map(|f| (f, window.offset_s)),
        drive_window: Some((window.offset_s, window.end_s)),
        resident: opts_d.resident.map(|_| report.resident),
        // A replayed session runs its recorded turns, not the session file's.
        session_turns: opts_d.replay.is_none().then_some(session.turns),
        slow: opts_d.slow.map(|(share, bps)| result::Slow {
            share,
            read_bps: bps,
            sessions: report.session_slow_us.len(),
            p50_session_ms: ms_q(&report.session_slow_us, 0.5),
            others_p50_session_ms: ms_q(&report.session_others_us, 0.5),
            others_p99_session_ms: ms_q(&report.session_others_us, 0.99),
        }),
        sched_delay_ms_per_s: Some(window.sched_delay_ms_per_s),
        cold: ms_q(&report.first_turn_us, 0.5).zip(ms_q(&report.later_turn_us, 0.5)),
        requests: requests(&report),
        errors_by_kind: report.errors_by_kind,
        bus: report.bus,
        ..Measured::default()
    }
}

fn requests(report: &DriveReport) -> std::collections::BTreeMap<String, result::RequestLatency> {
    report
        .requests
        .iter()
        .map(|(name, r)| {
            let latency = result::RequestLatency {
                count: r.us.len(),
                p50_ms: ms_q(&r.us, 0.5),
                p99_ms: ms_q(&r.us, 0.99),
                errors: r.errors,
            };
            (name.clone(), latency)
        })
        .collect()
}
