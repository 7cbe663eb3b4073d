//! One step: a fresh mock, a fresh SUT pointed at it, C sessions driven through it,
//! its process tree sampled all along, and one RESULT.

use crate::config::{Config, ReadyKind};
use crate::result::{round2, Harness, StepResult};
use anyhow::Context;
use drive::{drive, DriveOptions, Progress, SessionSpec};
use hdrhistogram::Histogram;
use probe::{Ready, Sampler, Sut, SutSpec};
use std::io::IsTerminal;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    /// Overrides `[step] concurrency`.
    pub concurrency: Option<usize>,
    pub allow_remote: bool,
    /// Print a live progress line on stderr (only when it is a terminal).
    pub progress: bool,
}

/// What a step found besides its RESULT: why it collapsed, in words, for the terminal.
#[derive(Debug, Clone)]
pub struct StepReport {
    pub result: StepResult,
    pub cause: Option<String>,
    pub first_errors: Vec<(String, String)>,
    pub violations: Vec<serde_json::Value>,
}

fn ms_q(h: &Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| round2(h.value_at_quantile(q) as f64 / 1000.0))
}

fn free_port() -> anyhow::Result<u16> {
    let l =
        std::net::TcpListener::bind("127.0.0.1:0").context("finding a free port for the SUT")?;
    Ok(l.local_addr()?.port())
}

/// Plimsoll's own CPU time (mock and driver), not counting the SUT it started.
fn own_cpu_sec() -> f64 {
    probe::tree::process_cpu_ticks(std::process::id()) as f64 / clock_hz()
}

fn clock_hz() -> f64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as f64
}

/// Signs in the SUT's last output that it could not create threads.
fn thread_exhaustion(tail: &str) -> bool {
    let t = tail.to_lowercase();
    [
        "can't start new thread",
        "unable to create native thread",
        "pthread_create",
        "resource temporarily unavailable",
        "failed to spawn thread",
    ]
    .iter()
    .any(|s| t.contains(s))
}

pub async fn run_step(cfg: &Config, opts: &StepOptions) -> anyhow::Result<StepReport> {
    let concurrency = opts.concurrency.unwrap_or(cfg.concurrency);
    let session = SessionSpec::load(&cfg.session_file)?;
    let mut scenario = match &cfg.scenario {
        Some(p) => mock::Scenario::load(p)?,
        None => mock::Scenario::default(),
    };
    scenario
        .apply_failure_env(|k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    let mock = mock::MockServer::start(mock::MockOptions {
        scenario,
        seed: Some(cfg.seed),
        ..Default::default()
    })
    .await
    .context("starting the mock")?;
    let mock_url = mock.base_url();
    let port = if cfg.port == 0 {
        free_port()?
    } else {
        cfg.port
    };
    let me = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "plimsoll".into());
    let fill = |s: &str| {
        s.replace("{{port}}", &port.to_string())
            .replace("{{mock}}", &mock_url)
            .replace("{{plimsoll}}", &me)
    };
    let mut env: Vec<(String, String)> = vec![
        ("OPENAI_BASE_URL".into(), format!("{mock_url}/v1")),
        ("ANTHROPIC_BASE_URL".into(), mock_url.clone()),
        ("OPENAI_API_KEY".into(), "plimsoll-dummy-key".into()),
        ("ANTHROPIC_API_KEY".into(), "plimsoll-dummy-key".into()),
        ("PLIMSOLL_MOCK_URL".into(), mock_url.clone()),
        ("PLIMSOLL_SUT_PORT".into(), port.to_string()),
        ("PORT".into(), port.to_string()),
        ("PLIMSOLL_CONCURRENCY".into(), concurrency.to_string()),
        ("PLIMSOLL_SEED".into(), cfg.seed.to_string()),
    ];
    env.extend(cfg.env.iter().map(|(k, v)| (k.clone(), fill(v))));
    let base = format!("http://127.0.0.1:{port}");
    let spec = SutSpec {
        command: cfg.command.iter().map(|c| fill(c)).collect(),
        env,
        cwd: Some(cfg.cwd.clone()),
        ready: match &cfg.ready {
            ReadyKind::Http(path) => Ready::Http(format!("{base}{path}")),
            ReadyKind::Port => Ready::Port(port),
            ReadyKind::Log(t) => Ready::Log(t.clone()),
        },
        ready_timeout: Duration::from_secs_f64(cfg.ready_timeout_s),
        stop_grace: Duration::from_secs_f64(cfg.stop_grace_s),
    };
    let mut sut = Sut::start(&spec)
        .await
        .with_context(|| format!("starting the SUT from {}", cfg.file.display()))?;
    let sampler = Sampler::start(sut.pid, Duration::from_millis(cfg.sample_ms));
    let cpu0 = own_cpu_sec();
    let progress = Arc::new(Progress::default());
    let ticker = (opts.progress && std::io::stderr().is_terminal()).then(|| {
        let p = progress.clone();
        tokio::spawn(async move {
            let t0 = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                eprint!(
                    "\r  {:>5.1} s  sessions {}/{} ok, {} failed  turns {}   ",
                    t0.elapsed().as_secs_f64(),
                    p.sessions_ok.load(Relaxed),
                    concurrency,
                    p.sessions_failed.load(Relaxed),
                    p.turns.load(Relaxed)
                );
            }
        })
    });
    let driven = drive(
        &session,
        &DriveOptions {
            concurrency,
            base,
            seed: cfg.seed,
            step_timeout: Duration::from_secs_f64(cfg.timeout_s),
            allow_remote: opts.allow_remote,
        },
        progress,
    )
    .await;
    if let Some(t) = ticker {
        t.abort();
        eprint!("\r{:80}\r", "");
    }
    let harness_cpu = own_cpu_sec() - cpu0;
    let probe = sampler.finish();
    let died = sut.exited();
    let stopped = sut.stop().await;
    let report = driven?;
    let timing = mock.app.stats.snapshot();
    let ledger = mock.app.ledger.snapshot();
    mock.shutdown().await.ok();

    let totals = &ledger["totals"];
    let violations = totals["integrity_violations"].as_u64().unwrap_or(0);
    let injected: u64 = totals["injected_failures"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum());
    let mut ideal: Vec<f64> = (0..concurrency)
        .filter_map(|i| ledger["sessions"][format!("s{i}")]["llm_ms"].as_f64())
        .map(|ms| ms + session.think_ms * session.turns.saturating_sub(1) as f64)
        .collect();
    ideal.sort_by(f64::total_cmp);
    let ideal_ms = (!ideal.is_empty()).then(|| round2(ideal[ideal.len() / 2]));
    let p50_session = ms_q(&report.session_us, 0.5);
    let lag_p99 = round2(report.lag_us.value_at_quantile(0.99) as f64 / 1000.0);
    let bound = if timing.late_p99_ms > cfg.harness_lag_ms || lag_p99 > cfg.harness_lag_ms {
        "harness"
    } else {
        "sut"
    };
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    let total = report.sessions_ok + report.sessions_failed;
    let (outcome, cause) = if let Some(status) = died {
        use std::os::unix::process::ExitStatusExt;
        let sig = status.signal();
        if sig == Some(9) || status.code() == Some(137) {
            ("oom_killed", Some(format!("the SUT was killed by SIGKILL ({status}) while under load: the kernel's OOM killer is the usual sender")))
        } else if thread_exhaustion(&stopped.tail) {
            (
                "thread_exhaustion",
                Some("the SUT could not create more threads (see its last output)".into()),
            )
        } else {
            (
                "crashed",
                Some(format!("the SUT exited during the step ({status})")),
            )
        }
    } else if report.timed_out {
        (
            "timeout",
            Some(format!(
                "sessions were still running after the step timeout of {} s",
                cfg.timeout_s
            )),
        )
    } else if violations > 0 {
        (
            "integrity",
            Some(format!(
                "{violations} integrity violation(s): the SUT's conversations were corrupted"
            )),
        )
    } else if total > 0 && report.sessions_failed as f64 / total as f64 > cfg.error_rate {
        (
            "error_rate",
            Some(format!(
                "{} of {total} sessions failed (threshold {})",
                report.sessions_failed, cfg.error_rate
            )),
        )
    } else {
        ("ok", None)
    };
    let result = StepResult {
        schema_version: 1,
        concurrency,
        sessions_ok: report.sessions_ok,
        sessions_failed: report.sessions_failed,
        turns: report.turns,
        wall_ms: round2(report.wall_ms),
        p50_session_ms: p50_session,
        p99_session_ms: ms_q(&report.session_us, 0.99),
        p50_turn_ms: ms_q(&report.turn_us, 0.5),
        p99_turn_ms: ms_q(&report.turn_us, 0.99),
        p50_ttft_ms: ms_q(&report.ttft_us, 0.5),
        p99_ttft_ms: ms_q(&report.ttft_us, 0.99),
        ideal_session_ms: ideal_ms,
        latency_inflation: match (p50_session, ideal_ms) {
            (Some(m), Some(i)) if i > 0.0 => Some(round2(m / i)),
            _ => None,
        },
        peak_rss_mb: round2(probe.peak_rss_kb as f64 / 1024.0),
        rss_kb_per_session: round2(
            probe.peak_rss_kb.saturating_sub(probe.baseline_rss_kb) as f64 / concurrency as f64,
        ),
        baseline_rss_mb: round2(probe.baseline_rss_kb as f64 / 1024.0),
        peak_threads: probe.peak_threads,
        peak_fds: probe.peak_fds,
        cpu_ms_per_turn: (report.turns > 0)
            .then(|| round2(probe.cpu_sec * 1000.0 / report.turns as f64)),
        cpu_sec: round2(probe.cpu_sec),
        llm_calls: totals["llm_calls"].as_u64().unwrap_or(0),
        llm_tokens_out: totals["output_tokens"].as_u64().unwrap_or(0),
        injected_failures: injected,
        integrity_violations: violations,
        errors_by_kind: report.errors_by_kind.clone(),
        files_created: stopped.files_created,
        harness: Harness {
            mock_timing_error_p99_ms: round2(timing.late_p99_ms),
            driver_lag_p99_ms: lag_p99,
            cpu_share: round2(harness_cpu / (report.wall_ms / 1000.0).max(1e-3) / cores),
            bound,
        },
        outcome,
    };
    let violations_list = ledger["violations"].as_array().cloned().unwrap_or_default();
    Ok(StepReport {
        result,
        cause: cause.map(|c| {
            if stopped.tail.is_empty() || outcome == "ok" {
                c
            } else {
                format!("{c}\nlast SUT output:\n{}", stopped.tail)
            }
        }),
        first_errors: report.first_errors.into_iter().collect(),
        violations: violations_list.into_iter().take(5).collect(),
    })
}
