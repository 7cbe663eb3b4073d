//! Turning a step's measurements into its RESULT and naming its outcome from evidence:
//! the SUT's exit status and last output, the driver's timeout, the mock's integrity
//! ledger, the failed-session share.

use crate::config::Config;
use crate::result::{round2, Harness, StepResult};
use crate::step::{Rig, StepReport};
use probe::{Stopped, Summary};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Latencies {
    pub p50_session: Option<f64>,
    pub p99_session: Option<f64>,
    pub p50_turn: Option<f64>,
    pub p99_turn: Option<f64>,
    pub p50_ttft: Option<f64>,
    pub p99_ttft: Option<f64>,
}

/// What the sessions' side of a step measured (the built-in driver, or a harness).
pub struct Measured {
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub lat: Latencies,
    pub think_ms_per_session: f64,
    pub lag_p99_ms: f64,
    pub timed_out: bool,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub first_errors: Vec<(String, String)>,
    pub harness_cpu_sec: f64,
    /// Open model: (arrival rate per second, most sessions in flight).
    pub open_model: Option<(f64, u64)>,
    /// The cap the SUT ran under: method and size.
    pub cap: Option<(&'static str, crate::cap::CapSpec)>,
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

pub(crate) async fn judge(
    cfg: &Config,
    rig: Rig,
    probe: Summary,
    died: Option<std::process::ExitStatus>,
    stopped: Stopped,
    m: Measured,
) -> StepReport {
    let sessions = rig.concurrency;
    // In an open model the concurrency is what the arrivals produced, not what was asked.
    let concurrency = m
        .open_model
        .map_or(sessions, |(_, peak)| (peak as usize).max(1));
    let timing = rig.mock.app.stats.snapshot();
    let ledger = rig.mock.app.ledger.snapshot();
    rig.mock.shutdown().await.ok();
    let totals = &ledger["totals"];
    let violations = totals["integrity_violations"].as_u64().unwrap_or(0);
    let injected: u64 = totals["injected_failures"]
        .as_object()
        .map_or(0, |o| o.values().filter_map(|v| v.as_u64()).sum());
    // Ideal: what the mock scheduled for a session's replies, plus its think time.
    let mut ideal: Vec<f64> = ledger["sessions"]
        .as_object()
        .map(|s| {
            s.iter()
                .filter(|(k, _)| k.as_str() != mock::ledger::ANONYMOUS)
                .filter_map(|(_, v)| v["llm_ms"].as_f64())
                .map(|ms| ms + m.think_ms_per_session)
                .collect()
        })
        .unwrap_or_default();
    ideal.sort_by(f64::total_cmp);
    let ideal_ms = (!ideal.is_empty()).then(|| round2(ideal[ideal.len() / 2]));
    let bound = if timing.late_p99_ms > cfg.harness_lag_ms || m.lag_p99_ms > cfg.harness_lag_ms {
        "harness"
    } else {
        "sut"
    };
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    let total = m.sessions_ok + m.sessions_failed;
    let cg_ooms = probe.cgroup.as_ref().map_or(0, |c| c.oom_kills);
    let (outcome, cause) = if cg_ooms > 0 {
        ("oom_killed", Some(format!("the kernel OOM-killed {cg_ooms} process(es) in the SUT's cgroup (memory.events / memory.oom_control)")))
    } else if let Some(status) = died {
        use std::os::unix::process::ExitStatusExt;
        if status.signal() == Some(9) || status.code() == Some(137) {
            ("oom_killed", Some(format!("the SUT was killed by SIGKILL ({status}) under load; the kernel's OOM killer is the usual sender")))
        } else if thread_exhaustion(&stopped.tail) {
            (
                "thread_exhaustion",
                Some("the SUT could not create more threads (see its last output)".to_string()),
            )
        } else {
            (
                "crashed",
                Some(format!("the SUT exited during the step ({status})")),
            )
        }
    } else if m.timed_out {
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
    } else if total > 0 && m.sessions_failed as f64 / total as f64 > cfg.error_rate {
        (
            "error_rate",
            Some(format!(
                "{} of {total} sessions failed (threshold {})",
                m.sessions_failed, cfg.error_rate
            )),
        )
    } else {
        ("ok", None)
    };
    let result = StepResult {
        schema_version: 1,
        concurrency,
        sessions_ok: m.sessions_ok,
        sessions_failed: m.sessions_failed,
        turns: m.turns,
        wall_ms: round2(m.wall_ms),
        p50_session_ms: m.lat.p50_session,
        p99_session_ms: m.lat.p99_session,
        p50_turn_ms: m.lat.p50_turn,
        p99_turn_ms: m.lat.p99_turn,
        p50_ttft_ms: m.lat.p50_ttft,
        p99_ttft_ms: m.lat.p99_ttft,
        ideal_session_ms: ideal_ms,
        latency_inflation: match (m.lat.p50_session, ideal_ms) {
            (Some(s), Some(i)) if i > 0.0 => Some(round2(s / i)),
            _ => None,
        },
        peak_rss_mb: round2(probe.peak_rss_kb as f64 / 1024.0),
        rss_kb_per_session: round2(
            probe.peak_rss_kb.saturating_sub(probe.baseline_rss_kb) as f64 / concurrency as f64,
        ),
        baseline_rss_mb: round2(probe.baseline_rss_kb as f64 / 1024.0),
        peak_threads: probe.peak_threads,
        peak_fds: probe.peak_fds,
        cpu_ms_per_turn: (m.turns > 0).then(|| round2(probe.cpu_sec * 1000.0 / m.turns as f64)),
        cpu_sec: round2(probe.cpu_sec),
        llm_calls: totals["llm_calls"].as_u64().unwrap_or(0),
        llm_tokens_out: totals["output_tokens"].as_u64().unwrap_or(0),
        injected_failures: injected,
        integrity_violations: violations,
        errors_by_kind: m.errors_by_kind,
        files_created: stopped.files_created,
        harness: Harness {
            mock_timing_error_p99_ms: round2(timing.late_p99_ms),
            driver_lag_p99_ms: m.lag_p99_ms,
            cpu_share: round2(m.harness_cpu_sec / (m.wall_ms / 1000.0).max(1e-3) / cores),
            bound,
        },
        outcome,
        arrival_rate_per_s: m.open_model.map(|(r, _)| r),
        sessions: m.open_model.map(|_| sessions as u64),
        cgroup_mem_peak_mb: probe
            .cgroup
            .as_ref()
            .map(|c| round2(c.peak_kb as f64 / 1024.0)),
        cgroup_oom_kills: probe.cgroup.as_ref().map(|c| c.oom_kills),
        cap: m.cap.map(|(method, c)| crate::result::CapInfo {
            method,
            cpus: c.cpus,
            mem_mb: round2(c.mem_bytes as f64 / (1 << 20) as f64),
        }),
    };
    let violations_list = ledger["violations"].as_array().cloned().unwrap_or_default();
    StepReport {
        result,
        cause: cause.map(|c| {
            if stopped.tail.is_empty() || outcome == "integrity" || outcome == "error_rate" {
                c
            } else {
                format!("{c}\nlast SUT output:\n{}", stopped.tail)
            }
        }),
        first_errors: m.first_errors,
        violations: violations_list.into_iter().take(5).collect(),
    }
}
