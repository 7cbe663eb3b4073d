//! One step: a fresh mock, a fresh SUT pointed at it, C sessions driven through it
//! (or the user's own harness driving them), its process tree sampled all along, and
//! one RESULT.

use crate::fleet::Fleet;
use crate::judge::judge;
use crate::measured::{Latencies, Measured};
use crate::rig::{own_cpu_sec, Rig};
use anyhow::Context;
use drive::{drive, DriveOptions, Progress, SessionSpec};
use experiment::{Config, ReadyKind};
use hdrhistogram::Histogram;
use probe::{Ready, Sampler, SutSpec};
use result::round2;
pub use result::StepReport;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    /// Overrides `[step] concurrency`.
    pub concurrency: Option<usize>,
    pub allow_remote: bool,
    /// Print a live progress line on stderr (only when it is a terminal).
    pub progress: bool,
    /// Harness mode from the command line (run through `sh -c`); overrides `[harness]`.
    pub harness: Option<String>,
    /// Open model: sessions arrive at this rate per second (overrides `[step] arrival_rate`).
    pub rate: Option<f64>,
    /// Run the SUT under this CPU and memory cap (a cgroup made for the step).
    pub cap: Option<cap::CapSpec>,
    /// Slow consumers: (share, bytes a second); overrides `[step] slow_share`.
    pub slow: Option<(f64, f64)>,
    /// The responsiveness probe's path on the SUT (overrides `[step] probe_path`).
    pub probe_path: Option<String>,
    /// Resident sessions (overrides `[step] resident`): this many opened first, the
    /// concurrency of them active at a time.
    pub resident: Option<usize>,
    /// A soak: the load held for a duration with session churn, then a drain, the SUT
    /// sampled into a series all along (see `soak`).
    pub soak: Option<crate::soak::SoakPlan>,
    /// Turns a session (overrides the session file's `turns`): long sessions in a soak.
    pub turns: Option<u32>,
    /// The session file, instead of the config's `[session] file`.
    pub session: Option<std::path::PathBuf>,
    /// Cores for Plimsoll and for the SUT (Plimsoll pins itself before the runtime
    /// starts; the step pins the SUT).
    pub partition: Option<probe::affinity::Partition>,
    /// Run this `[[arm]]` of the config (its command and environment over `[sut]`'s).
    pub arm: Option<String>,
    /// Session axes set over the session file (`--set messages=150`, a sweep's point).
    pub set: Vec<(String, f64)>,
}

fn ms_q(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| round2(h.value_at_quantile(q) as f64 / 1000.0))
}

pub async fn run_step(cfg: &Config, opts: &StepOptions) -> anyhow::Result<StepReport> {
    let armed;
    let cfg = match &opts.arm {
        None => cfg,
        Some(name) => {
            armed = cfg.with_arm(name).ok_or_else(|| {
                anyhow::anyhow!("--arm {name}: no such [[arm]] ({})", cfg.arm_names())
            })?;
            &armed
        }
    };
    let concurrency = opts.concurrency.unwrap_or(cfg.concurrency);
    let harness = match (&opts.harness, &cfg.harness) {
        (Some(line), _) => Some(vec!["sh".to_string(), "-c".to_string(), line.clone()]),
        (None, Some(cmd)) => Some(cmd.clone()),
        (None, None) => None,
    };
    if harness.is_none() && cfg.command.is_empty() {
        anyhow::bail!(
            "{}: [sut] command is required (or pass --harness)",
            cfg.file.display()
        );
    }
    // Read the session file before starting anything, so a bad one costs nothing.
    let session = match harness {
        Some(_) => None,
        None => Some({
            let file = opts.session.as_ref().unwrap_or(&cfg.session_file);
            let mut s = SessionSpec::load(file)?;
            s.turns = opts.turns.unwrap_or(s.turns).max(1);
            for (name, v) in &opts.set {
                s.set(name, *v)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            }
            s
        }),
    };
    // Each warning once per process, not once per step of a ladder.
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    for w in session.iter().flat_map(|s| &s.warnings) {
        let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
        if !said.contains(w) {
            eprintln!("{w}");
            said.push(w.clone());
        }
    }
    let resident = opts.resident.or(cfg.resident);
    if let (Some(n), Some(s)) = (resident, &session) {
        if s.setup.is_empty() {
            anyhow::bail!("--resident (or [step] resident) needs a session that opens with [[setup]] requests: they are what holds a session open in the SUT between its turns (see session.toml's [[setup]])");
        }
        if n < concurrency {
            anyhow::bail!("--resident {n} is fewer than the {concurrency} sessions to keep active: give at least as many residents as the concurrency");
        }
        if opts.soak.is_some() {
            anyhow::bail!("--resident (or [step] resident) and a soak do not go together: a soak churns sessions, residents stay open; leave resident out of the soak's config");
        }
        if opts.slow.or(cfg.slow).is_some_and(|(share, _)| share > 0.0) {
            anyhow::bail!("--resident and slow consumers do not go together yet: drive the residents at full speed, or the slow share without --resident");
        }
        if opts.rate.or(cfg.arrival_rate).is_some() {
            anyhow::bail!("--resident and an arrival rate do not go together: residents are driven a closed model, the concurrency of them at a time");
        }
    }
    if harness.is_some() && cfg.replicas > 1 {
        anyhow::bail!("replicas ({}) need Plimsoll to drive the sessions, to spread them over the replicas; a harness drives its own (leave out --harness, or the replicas)", cfg.replicas);
    }
    let rig = Rig::start(cfg, concurrency).await?;
    match (harness, session) {
        (Some(cmd), _) => crate::harness::run(cfg, opts, rig, cmd).await,
        (None, Some(session)) => driven(cfg, opts, rig, &session).await,
        (None, None) => unreachable!("a session is loaded whenever there is no harness"),
    }
}

async fn driven(
    cfg: &Config,
    opts: &StepOptions,
    mut rig: Rig,
    session: &SessionSpec,
) -> anyhow::Result<StepReport> {
    let base = rig.base();
    let sut_cores = opts
        .partition
        .as_ref()
        .map_or(String::new(), |p| probe::affinity::list(&p.sut));
    let mut cap = opts
        .cap
        .map(|c| cap::Cap::create_on(c, &format!("c{}", rig.concurrency), &sut_cores));
    // CPU pressure: the SUT's own cgroup's when it has one (v2), else the machine's.
    let psi = cap
        .as_ref()
        .and_then(|c| c.pressure_file())
        .map(|f| (f, "cgroup"))
        .unwrap_or_else(|| ("/proc/pressure/cpu".into(), "system"));
    let psi0 = probe::pressure::some_total_us(&psi.0);
    if let Some(w) = cap.as_ref().and_then(|c| c.warning()) {
        eprintln!("{w}");
    }
    let (words, processes) = cfg.sut_command();
    let command: Vec<String> = words.iter().map(|c| rig.fill(c)).collect();
    let spec = SutSpec {
        command: cap.as_ref().map_or(command.clone(), |c| c.wrap(&command)),
        env: rig.env.clone(),
        cwd: Some(cfg.cwd.clone()),
        ready: match &cfg.ready {
            ReadyKind::Http(path) => Ready::Http(format!("{base}{path}")),
            ReadyKind::Port => Ready::Port(rig.port),
            ReadyKind::Log(t) => Ready::Log(t.clone()),
        },
        ready_timeout: Duration::from_secs_f64(cfg.ready_timeout_s),
        stop_grace: Duration::from_secs_f64(cfg.stop_grace_s),
        cores: opts
            .partition
            .as_ref()
            .map_or(Vec::new(), |p| p.sut.clone()),
        log_pattern: cfg.log_pattern.clone(),
    };
    let mut sut = Fleet::start(&spec, rig.port, processes)
        .await
        .with_context(|| format!("starting the SUT from {}", cfg.file.display()))?;
    let sampler = Arc::new(Sampler::start_on(
        sut.pid(),
        sut.pids(),
        Duration::from_millis(cfg.sample_ms),
    ));
    rig.deps.sample(cfg, Duration::from_millis(cfg.sample_ms));
    let cpu0 = own_cpu_sec();
    let progress = Arc::new(Progress::default());
    let soak_flags = (
        Arc::new(std::sync::atomic::AtomicBool::new(false)),
        Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let _stop_series = crate::soak::StopOnDrop(soak_flags.1.clone());
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
            (soak_flags.0.clone(), soak_flags.1.clone()),
        )
    });
    let live = crate::live::start(
        opts.progress,
        rig.concurrency,
        progress.clone(),
        sampler.clone(),
    );
    let resident = opts.resident.or(cfg.resident);
    let mut opts_d = DriveOptions {
        concurrency: rig.concurrency,
        base,
        replicas: match sut.len() {
            1 => Vec::new(),
            _ => sut.bases.clone(),
        },
        seed: cfg.seed,
        step_timeout: Duration::from_secs_f64(cfg.timeout_s)
            + opts.soak.as_ref().map_or(Duration::ZERO, |s| s.duration),
        allow_remote: opts.allow_remote,
        arrival_rate: opts.rate.or(cfg.arrival_rate),
        churn: opts
            .soak
            .as_ref()
            .filter(|_| opts.rate.or(cfg.arrival_rate).is_none())
            .map(|s| s.duration),
        resident,
        slow: opts.slow.or(cfg.slow).filter(|(share, _)| *share > 0.0),
        on_resident: resident.map(|_| {
            let s = sampler.clone();
            drive::Hook(Arc::new(move || s.mark()))
        }),
        shard: None,
        start_at: None,
        name_prefix: String::new(),
    };
    let drive_offset_s = sampler.started().elapsed().as_secs_f64();
    let t_drive = std::time::Instant::now();
    let all_pids = sut.pids();
    let wait0 = probe::tree::run_queue_wait_ns(&all_pids());
    let driven = drive(session, &opts_d, progress).await;
    let drive_end_s = drive_offset_s + t_drive.elapsed().as_secs_f64();
    let sched_delay = {
        let wait = probe::tree::run_queue_wait_ns(&all_pids());
        let secs = t_drive.elapsed().as_secs_f64().max(1e-3);
        round2(wait.saturating_sub(wait0) as f64 / 1e6 / secs)
    };
    opts_d.on_resident = None; // its hold on the sampler, so it can be finished below
    if let (Some(plan), Some(task)) = (&opts.soak, series) {
        // The drain: no load, the series still running, to see what comes back.
        soak_flags
            .0
            .store(true, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(plan.drain).await;
        soak_flags
            .1
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = task.await;
    }
    let responsive = match responsive {
        Some(p) => p.finish().await,
        None => None,
    };
    let pressure = match (psi0, probe::pressure::some_total_us(&psi.0)) {
        (Some(a), Some(b)) => Some((
            b.saturating_sub(a) as f64 / t_drive.elapsed().as_micros().max(1) as f64,
            psi.1,
        )),
        _ => None,
    };
    if let Some(l) = live {
        l.finish();
    }
    let harness_cpu = own_cpu_sec() - cpu0;
    let probe = Arc::try_unwrap(sampler)
        .map(Sampler::finish)
        .unwrap_or_else(|s| s.summary());
    let died = sut.exited();
    let throttled = cap.as_ref().and_then(|c| c.cpu_throttled());
    let stopped = sut.stop().await;
    if let Some(c) = cap.as_mut() {
        c.remove();
    }
    let report = driven?;
    let measured = Measured {
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
        think_ms_per_session: session.think_ms * session.turns.saturating_sub(1) as f64,
        think_ms_per_turn: session.think_ms * session.turns.saturating_sub(1) as f64
            / session.turns.max(1) as f64,
        lag_p99_ms: round2(report.lag_us.value_at_quantile(0.99) as f64 / 1000.0),
        timed_out: report.timed_out,
        errors_by_kind: report.errors_by_kind,
        first_errors: report.first_errors.into_iter().collect(),
        failed_sessions: report.failed_sessions,
        harness_cpu_sec: harness_cpu,
        open_model: opts_d.arrival_rate.map(|r| (r, report.peak_in_flight)),
        cap: cap.as_ref().map(|c| (c.method, c.spec)),
        partition: opts.partition.clone().map(|p| {
            let held = cap.as_ref().is_some_and(|c| c.cpuset);
            (p, if held { "cpuset" } else { "affinity" })
        }),
        throttled,
        pressure,
        full_load: report.full_load.map(|f| (f, drive_offset_s)),
        drive_window: Some((drive_offset_s, drive_end_s)),
        bus: report.bus.clone(),
        resident: resident.map(|_| report.resident),
        probe: responsive,
        session_turns: Some(session.turns),
        slow: opts_d.slow.map(|(share, bps)| result::Slow {
            share,
            read_bps: bps,
            sessions: report.session_slow_us.len(),
            p50_session_ms: ms_q(&report.session_slow_us, 0.5),
            others_p50_session_ms: ms_q(&report.session_others_us, 0.5),
            others_p99_session_ms: ms_q(&report.session_others_us, 0.99),
        }),
        sched_delay_ms_per_s: Some(sched_delay),
        requests: report
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
            .collect(),
    };
    Ok(judge(cfg, rig, probe, died, stopped, measured).await)
}
