//! Turning a step's measurements into its RESULT and naming its outcome from evidence:
//! the SUT's exit status and last output, the driver's timeout, the mock's integrity
//! ledger, the failed-session share.

use crate::config::Config;
use crate::rates::{loaded_rates, round3, sut_cores};
use crate::rig::Rig;
use probe::{Stopped, Summary};
use result::{round2, Harness, StepResult};
use std::collections::BTreeMap;

/// What a step found besides its RESULT: why it collapsed, in words, for the terminal.
#[derive(Debug, Clone)]
pub struct StepReport {
    pub result: StepResult,
    pub cause: Option<String>,
    pub first_errors: Vec<(String, String)>,
    pub violations: Vec<serde_json::Value>,
    /// Sessions whose marker reached the mock (0 with LLM calls: the marker got lost).
    pub marked_sessions: usize,
    /// The last lines the SUT printed over the step (at most `probe::log::KEEP`).
    pub log_lines: Vec<String>,
}

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
#[derive(Default)]
pub struct Measured {
    pub sessions_ok: u64,
    pub sessions_failed: u64,
    pub turns: u64,
    pub wall_ms: f64,
    pub lat: Latencies,
    pub think_ms_per_session: f64,
    /// The driver's names of the sessions that failed (left out of the ideal time).
    pub failed_sessions: std::collections::HashSet<String>,
    /// Think time between two turns of a session.
    pub think_ms_per_turn: f64,
    pub lag_p99_ms: f64,
    pub timed_out: bool,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub first_errors: Vec<(String, String)>,
    pub harness_cpu_sec: f64,
    /// Open model: (arrival rate per second, most sessions in flight).
    pub open_model: Option<(f64, u64)>,
    /// The cap the SUT ran under: method and size.
    pub cap: Option<(&'static str, cap::CapSpec)>,
    /// The cores Plimsoll and the SUT ran on, and how the SUT was held to its own
    /// (cpuset or affinity).
    pub partition: Option<(probe::affinity::Partition, &'static str)>,
    /// Slow consumers and how the others fared.
    pub slow: Option<result::Slow>,
    /// The responsiveness probe: (p50, p99) ms and failed attempts.
    pub probe: Option<(f64, f64, u64)>,
    /// Run-queue wait of the SUT's threads per second of driving, in ms.
    pub sched_delay_ms_per_s: Option<f64>,
    /// Turns a session (from the session file; None in harness mode).
    pub session_turns: Option<u32>,
    /// Resident sessions that opened, with `--resident`.
    pub resident: Option<u64>,
    /// Per named request: latency and failures.
    pub requests: BTreeMap<String, result::RequestLatency>,
    /// Share of the driving time in which a task waited for a CPU (PSI), and whose:
    /// "cgroup" (the SUT's own) or "system".
    pub pressure: Option<(f64, &'static str)>,
    /// Share of the cap's CPU periods the kernel throttled.
    pub throttled: Option<f64>,
    /// The span of full load (closed model), and where it starts on the sampler's clock
    /// (seconds from the sampler's start to the driver's).
    pub full_load: Option<(drive::FullLoad, f64)>,
    /// When sessions were driven: (start, end) in seconds since sampling began.
    pub drive_window: Option<(f64, f64)>,
    /// A bus step's account.
    pub bus: Option<result::Bus>,
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

/// An outcome other than ok and its cause in words.
type Collapse = (&'static str, String);

/// The kernel counted OOM kills in the SUT's own cgroup.
fn cgroup_oom(probe: &Summary) -> Option<Collapse> {
    let n = probe.cgroup.as_ref().map_or(0, |c| c.oom_kills);
    (n > 0).then(|| ("oom_killed", format!("the kernel OOM-killed {n} process(es) in the SUT's cgroup (memory.events / memory.oom_control)")))
}

/// The SUT exited during the step: SIGKILL (the OOM killer's signal), no more threads, or
/// another crash.
fn exited(died: Option<std::process::ExitStatus>, tail: &str) -> Option<Collapse> {
    use std::os::unix::process::ExitStatusExt;
    let status = died?;
    Some(
        if status.signal() == Some(9) || status.code() == Some(137) {
            ("oom_killed", format!("the SUT was killed by SIGKILL ({status}) under load; the kernel's OOM killer is the usual sender"))
        } else if thread_exhaustion(tail) {
            (
                "thread_exhaustion",
                "the SUT could not create more threads (see its last output)".to_string(),
            )
        } else {
            (
                "crashed",
                format!("the SUT exited during the step ({status})"),
            )
        },
    )
}

fn timed_out(m: &Measured, timeout_s: f64) -> Option<Collapse> {
    m.timed_out.then(|| {
        (
            "timeout",
            format!("sessions were still running after the step timeout of {timeout_s} s"),
        )
    })
}

fn integrity(violations: u64, by_kind: &[(String, u64)]) -> Option<Collapse> {
    let kinds: Vec<String> = by_kind
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| match k.as_str() {
            "reasoning" => format!("{n} reasoning: thinking blocks or reasoning items dropped, moved or altered before they came back"),
            _ => format!("{n} {k}"),
        })
        .collect();
    let kinds = if kinds.is_empty() {
        String::new()
    } else {
        format!(" ({})", kinds.join("; "))
    };
    let what = if by_kind
        .iter()
        .any(|(k, n)| *n > 0 && ["lost", "duplicated", "out of order"].contains(&k.as_str()))
    {
        "the bus lost, duplicated or reordered messages"
    } else {
        "the SUT's conversations were corrupted"
    };
    (violations > 0).then(|| {
        (
            "integrity",
            format!("{violations} integrity violation(s){kinds}: {what}"),
        )
    })
}

/// The mock's integrity violations and a bus's (lost, duplicated, out of order where
/// order was promised) together.
fn with_bus(
    violations: u64,
    by_kind: &[(String, u64)],
    bus: Option<&result::Bus>,
) -> (u64, Vec<(String, u64)>) {
    let mut kinds = by_kind.to_vec();
    let Some(b) = bus else {
        return (violations, kinds);
    };
    kinds.push(("lost".into(), b.lost));
    kinds.push(("duplicated".into(), b.duplicated));
    if b.ordered {
        kinds.push(("out of order".into(), b.out_of_order));
    }
    (violations + b.violations(), kinds)
}

fn error_rate(m: &Measured, threshold: f64) -> Option<Collapse> {
    let total = m.sessions_ok + m.sessions_failed;
    (total > 0 && m.sessions_failed as f64 / total as f64 > threshold).then(|| {
        (
            "error_rate",
            format!(
                "{} of {total} sessions failed (threshold {threshold})",
                m.sessions_failed
            ),
        )
    })
}

/// The SUT's scratch filesystem filled up (space or inodes), or its output says so,
/// and something failed: that is the cause, whatever form the failure took.
fn disk_full(disk: &probe::disk::DiskSummary, tail: &str, failed: bool) -> Option<Collapse> {
    let said = tail.to_lowercase().contains("no space left on device");
    let mb = disk.peak_bytes as f64 / 1048576.0;
    let why = if disk.out_of_inodes() {
        format!("the filesystem of the SUT's scratch directory ran out of inodes ({} files there at peak; {} inodes in all)", disk.peak_files, disk.fs_inodes.unwrap_or(0))
    } else if disk.full() {
        format!("the filesystem of the SUT's scratch directory filled up ({mb:.1} MB and {} files there at peak{})", disk.peak_files, if said { "; its output says \"No space left on device\"" } else { "" })
    } else if said {
        // Some filesystem filled, not (as far as was seen) the scratch directory's.
        let free = disk
            .free_min_bytes
            .map_or("?".to_string(), |b| format!("{:.0}", b as f64 / 1048576.0));
        format!("the SUT's output says \"No space left on device\": a filesystem it writes to filled up (its scratch directory's had {free} MB free at the least)")
    } else {
        return None;
    };
    failed.then_some(("disk_full", why))
}

/// The outcome from the strongest evidence first: the kernel, a full disk, the exit
/// status, the timeout, the oracle, the failed share.
fn outcome(
    cfg: &Config,
    probe: &Summary,
    died: Option<std::process::ExitStatus>,
    stopped: &Stopped,
    m: &Measured,
    violations: (u64, &[(String, u64)]),
) -> Option<Collapse> {
    let tail = stopped.tail.as_str();
    let failed = died.is_some() || m.sessions_failed > 0 || m.timed_out;
    cgroup_oom(probe)
        .or_else(|| disk_full(&stopped.disk, tail, failed))
        .or_else(|| exited(died, tail))
        .or_else(|| timed_out(m, cfg.timeout_s))
        .or_else(|| integrity(violations.0, violations.1))
        .or_else(|| error_rate(m, cfg.error_rate))
}

/// What the mock scheduled for a session's replies plus its think time: the median over
/// the sessions the ledger knows.
/// The median over the sessions that went through of the provider's unloaded time for
/// them, plus think time: a failed session asked the provider for less than a session
/// does (with most sessions failing early, the median would be one call).
fn ideal_session_ms(
    ledger: &serde_json::Value,
    think_ms: f64,
    failed: &std::collections::HashSet<String>,
) -> Option<f64> {
    let mut ideal: Vec<f64> = ledger["sessions"]
        .as_object()
        .map(|s| {
            s.iter()
                .filter(|(k, _)| k.as_str() != mock::ledger::ANONYMOUS)
                .filter(|(k, _)| !failed.contains(k.as_str()))
                .filter_map(|(_, v)| v["llm_ms"].as_f64())
                .map(|ms| ms + think_ms)
                .collect()
        })
        .unwrap_or_default();
    ideal.sort_by(f64::total_cmp);
    (!ideal.is_empty()).then(|| round2(ideal[ideal.len() / 2]))
}

/// A harness delay smaller than this share of the p50 turn cannot distort what was
/// measured, whatever its size in milliseconds.
pub const MATERIAL_SHARE: f64 = 0.05;

/// "harness" when the mock's frames or the driver's ticks were later than allowed *and*
/// that delay is a material share of a turn: 15 ms on 7.8 s turns is not.
pub(crate) fn bound(
    late_p99_ms: f64,
    lag_p99_ms: f64,
    allowed_ms: f64,
    p50_turn_ms: Option<f64>,
) -> &'static str {
    let delay = late_p99_ms.max(lag_p99_ms);
    let material = p50_turn_ms.is_none_or(|t| delay > t * MATERIAL_SHARE);
    if delay > allowed_ms && material {
        "harness"
    } else {
        "sut"
    }
}

/// What the mock knew at the end of the step.
struct MockSide {
    late_p99_ms: f64,
    llm_calls: u64,
    tokens_out: u64,
    injected: u64,
    violations: u64,
    ideal_ms: Option<f64>,
    violation_list: Vec<serde_json::Value>,
    marked: usize,
    provider: Option<result::Provider>,
    reasoning: Option<result::Reasoning>,
    /// Violations by kind (echo, isolation, history, reasoning).
    by_kind: Vec<(String, u64)>,
}

/// What reasoning cost, from the ledger (none when no reply reasoned).
fn reasoning_of(ledger: &serde_json::Value) -> Option<result::Reasoning> {
    let r = &ledger["totals"]["reasoning"];
    let replies = r["replies"].as_u64().filter(|n| *n > 0)?;
    let ms = |k: &str| round2(r[k].as_f64().unwrap_or(0.0));
    Some(result::Reasoning {
        replies,
        reasoning_tokens: r["reasoning_tokens"].as_u64().unwrap_or(0),
        first_token_ms: ms("first_token_ms_mean"),
        first_answer_token_ms: ms("first_answer_token_ms_mean"),
    })
}

/// What the provider's quotas and slots did, from the ledger (none when none were set).
fn provider_of(ledger: &serde_json::Value) -> Option<result::Provider> {
    let p = ledger.get("provider")?;
    let t = &ledger["totals"];
    let calls = t["llm_calls"].as_u64().unwrap_or(0);
    let answered = p["answered"].as_u64().unwrap_or(0);
    let retried = t["retries"].as_u64().unwrap_or(0).min(calls);
    let refused: std::collections::BTreeMap<String, u64> = p["refused"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_u64().filter(|n| *n > 0)?)))
        .collect();
    let n_refused: u64 = refused.values().sum();
    let queue_ms = t["queue_ms"].as_f64().unwrap_or(0.0);
    let provider_ms = queue_ms + t["llm_ms"].as_f64().unwrap_or(0.0);
    let queue_share = if provider_ms > 0.0 {
        queue_ms / provider_ms
    } else {
        0.0
    };
    // What held calls back most: the limit that refused most, or the slots when calls
    // spent a larger share of the provider's time waiting than they were refused.
    let refused_share = n_refused as f64 / calls.max(1) as f64;
    let top_refuser = p["refused_by"]
        .as_object()
        .and_then(|o| o.iter().max_by_key(|(_, n)| n.as_u64().unwrap_or(0)))
        .map(|(words, _)| words.clone());
    let slots = p["slots"].as_str().map(String::from);
    let binding = if analysis::provider::refusals_lead(refused_share, queue_share) {
        top_refuser
    } else if queue_share >= analysis::provider::QUEUE_LEADS {
        slots.or(top_refuser)
    } else {
        top_refuser
    };
    let wait = |k: &str| round2(p["queue_wait_ms"][k].as_f64().unwrap_or(0.0));
    Some(result::Provider {
        limits: p["limits"].as_str().unwrap_or("").to_string(),
        answered,
        refused_share: round3(refused_share),
        refused,
        retried,
        amplification: round2(calls as f64 / (calls - retried).max(1) as f64),
        queue_wait_p50_ms: wait("p50"),
        queue_wait_p99_ms: wait("p99"),
        queue_share: round3(queue_share),
        peak_in_flight: p["peak_in_flight"].as_u64().unwrap_or(0),
        peak_queued: p["peak_queued"].as_u64().unwrap_or(0),
        binding,
    })
}

impl MockSide {
    fn read(
        timing: &mock::TimingSnapshot,
        ledger: &serde_json::Value,
        think_ms: f64,
        failed: &std::collections::HashSet<String>,
    ) -> MockSide {
        let totals = &ledger["totals"];
        MockSide {
            late_p99_ms: timing.late_p99_ms,
            llm_calls: totals["llm_calls"].as_u64().unwrap_or(0),
            tokens_out: totals["output_tokens"].as_u64().unwrap_or(0),
            injected: totals["injected_failures"]
                .as_object()
                .map_or(0, |o| o.values().filter_map(|v| v.as_u64()).sum()),
            violations: totals["integrity_violations"].as_u64().unwrap_or(0),
            ideal_ms: ideal_session_ms(ledger, think_ms, failed),
            violation_list: ledger["violations"].as_array().cloned().unwrap_or_default(),
            marked: ledger["sessions"].as_object().map_or(0, |o| {
                o.keys()
                    .filter(|k| k.as_str() != mock::ledger::ANONYMOUS)
                    .count()
            }),
            provider: provider_of(ledger),
            reasoning: reasoning_of(ledger),
            by_kind: totals["violations_by_kind"]
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                .collect(),
        }
    }
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
    let side = MockSide::read(
        &rig.mock.app.stats.snapshot(),
        &rig.mock.app.ledger_json(),
        m.think_ms_per_session,
        &m.failed_sessions,
    );
    let connections = crate::conns::connections(&probe, m.drive_window, &|p| rig.peer(p));
    rig.mock.shutdown().await.ok();
    let dependencies = rig.deps.finish(m.turns).await;
    let (violations, by_kind) = with_bus(side.violations, &side.by_kind, m.bus.as_ref());
    let found = outcome(cfg, &probe, died, &stopped, &m, (violations, &by_kind));
    let outcome = found.as_ref().map_or("ok", |f| f.0);
    let cause = found.map(|(o, c)| {
        if stopped.tail.is_empty() || o == "integrity" || o == "error_rate" {
            c
        } else {
            format!("{c}\nlast SUT output:\n{}", stopped.tail)
        }
    });
    let first_errors = m.first_errors.clone();
    let violations = side.violation_list.iter().take(5).cloned().collect();
    let bound = bound(
        side.late_p99_ms,
        m.lag_p99_ms,
        cfg.harness_lag_ms,
        m.lat.p50_turn,
    );
    let mut result = result(
        &probe,
        &stopped,
        m,
        &side,
        concurrency,
        sessions,
        outcome,
        bound,
    );
    result.connections = connections;
    result.dependencies = dependencies;
    result.arm = cfg.arm.clone();
    result.replicas = (cfg.replicas > 1 && cfg.harness.is_none()).then(|| result::Replicas {
        count: cfg.replicas,
        rss_mb_per_instance: round2(result.peak_rss_mb / cfg.replicas as f64),
        cap_scope: if result.cap.is_some() { "all" } else { "none" },
    });
    StepReport {
        result,
        cause,
        first_errors,
        violations,
        marked_sessions: side.marked,
        log_lines: stopped.log.kept.iter().cloned().collect(),
    }
}

#[allow(clippy::too_many_arguments)]
fn result(
    probe: &Summary,
    stopped: &Stopped,
    m: Measured,
    side: &MockSide,
    concurrency: usize,
    sessions: usize,
    outcome: &'static str,
    bound: &'static str,
) -> StepResult {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    let sut_cores = sut_cores(&m);
    let (rate, cpu_rate) = loaded_rates(&m, probe, concurrency);
    StepResult {
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
        ideal_session_ms: side.ideal_ms,
        latency_inflation: match (m.lat.p50_session, side.ideal_ms) {
            (Some(s), Some(i)) if i > 0.0 => Some(round2(s / i)),
            _ => None,
        },
        peak_rss_mb: round2(probe.peak_rss_kb as f64 / 1024.0),
        rss_kb_per_session: round2(
            probe.peak_rss_kb.saturating_sub(probe.baseline_rss_kb) as f64 / concurrency as f64,
        ),
        // What the sessions held at the peak carried, turn by turn (not over every turn
        // of a soak's churn, which would shrink towards 0 as the soak went on).
        rss_kb_per_turn: m.session_turns.map(|t| {
            round2(
                probe.peak_rss_kb.saturating_sub(probe.baseline_rss_kb) as f64
                    / concurrency as f64
                    / t.max(1) as f64,
            )
        }),
        baseline_rss_mb: round2(probe.baseline_rss_kb as f64 / 1024.0),
        peak_threads: probe.peak_threads,
        peak_fds: probe.peak_fds,
        cpu_ms_per_turn: (m.turns > 0).then(|| round2(probe.cpu_sec * 1000.0 / m.turns as f64)),
        cpu_sec: round2(probe.cpu_sec),
        llm_calls: side.llm_calls,
        llm_tokens_out: side.tokens_out,
        injected_failures: side.injected,
        integrity_violations: side.violations,
        errors_by_kind: m.errors_by_kind,
        files_created: stopped.files_created,
        harness: Harness {
            mock_timing_error_p99_ms: round2(side.late_p99_ms),
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
        cap: m.cap.map(|(method, c)| result::CapInfo {
            method,
            cpus: c.cpus,
            mem_mb: round2(c.mem_bytes as f64 / (1 << 20) as f64),
        }),
        turns_per_s: Some(round2(rate)),
        cpu_cores: Some(sut_cores),
        cpu_of_cap: Some(round3(cpu_rate / sut_cores)),
        cpu_throttled: m.throttled.map(round3),
        mem_of_cap: match (&probe.cgroup, m.cap) {
            (Some(cg), Some((_, c))) if c.mem_bytes > 0 => {
                Some(round3(cg.peak_kb as f64 * 1024.0 / c.mem_bytes as f64))
            }
            _ => None,
        },
        partition: m.partition.as_ref().map(|(p, method)| result::Partition {
            harness: probe::affinity::list(&p.harness),
            sut: probe::affinity::list(&p.sut),
            method,
        }),
        cpu_pressure: m.pressure.map(|(v, _)| round3(v)),
        cpu_pressure_scope: m.pressure.map(|(_, s)| s),
        requests: m.requests,
        resident: m.resident.map(|n| resident(probe, n, sessions)),
        slow: m.slow,
        probe_p50_ms: m.probe.map(|p| p.0),
        probe_p99_ms: m.probe.map(|p| p.1),
        probe_failed: m.probe.map(|p| p.2),
        sched_delay_ms_per_s: m.sched_delay_ms_per_s,
        log: Some(sut_log(&stopped.log)),
        connections: Vec::new(),
        dependencies: Vec::new(),
        arm: None,
        replicas: None,
        shards: None,
        bus: m.bus.clone(),
        provider: side.provider.clone(),
        reasoning: side.reasoning.clone(),
        scratch: Some(result::Scratch {
            peak_mb: round2(stopped.disk.peak_bytes as f64 / 1048576.0),
            peak_files: stopped.disk.peak_files,
            fs_free_min_mb: stopped
                .disk
                .free_min_bytes
                .map(|b| round2(b as f64 / 1048576.0)),
            fs_free_min_inodes: stopped.disk.free_min_inodes,
        }),
    }
}

/// Memory per resident session (what the open ones hold, read once they were open) and
/// per active one (what driving `active` of them added on top).
fn resident(probe: &Summary, opened: u64, active: usize) -> result::Resident {
    let at_open = probe.mark_rss_kb;
    result::Resident {
        sessions: opened,
        active: active as u64,
        rss_mb_open: at_open.map(|kb| round2(kb as f64 / 1024.0)),
        kb_per_resident: at_open
            .filter(|_| opened > 0)
            .map(|kb| round2((kb as f64 - probe.baseline_rss_kb as f64) / opened as f64)),
        kb_per_active: at_open
            .map(|kb| round2((probe.peak_after_mark_kb as f64 - kb as f64) / active.max(1) as f64)),
    }
}

/// The SUT's log as RESULT carries it: counts, and the most frequent kinds.
fn sut_log(book: &probe::log::LogBook) -> result::SutLog {
    let mut kinds: Vec<result::LogKind> = book
        .kinds
        .iter()
        .map(|((level, message), k)| result::LogKind {
            level: level.word(),
            message: message.clone(),
            count: k.count,
            example: k.example.clone(),
        })
        .collect();
    let kinds_seen = kinds.len() as u64 + book.kinds_dropped;
    kinds.sort_by(|a, b| b.count.cmp(&a.count).then(a.message.cmp(&b.message)));
    kinds.truncate(result::LOG_KINDS);
    result::SutLog {
        lines: book.lines,
        warnings: book.warnings,
        errors: book.errors,
        kinds,
        kinds_seen,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    fn cfg() -> Config {
        Config::parse("[sut]\ncommand = [\"x\"]\n", std::path::Path::new("p.toml")).unwrap()
    }

    fn measured(ok: u64, failed: u64) -> Measured {
        Measured {
            sessions_ok: ok,
            sessions_failed: failed,
            ..Default::default()
        }
    }

    #[test]
    fn the_kernel_outranks_every_other_witness() {
        let mut probe = Summary::default();
        assert_eq!(cgroup_oom(&probe), None);
        probe.cgroup = Some(probe::cgroup::CgroupMemory {
            path: "/x".into(),
            version: 1,
            current_kb: 0,
            peak_kb: 0,
            oom_kills: 2,
        });
        let m = Measured {
            timed_out: true,
            ..measured(0, 5)
        };
        let o = outcome(
            &cfg(),
            &probe,
            Some(ExitStatus::from_raw(9)),
            &Stopped::default(),
            &m,
            (3, &[]),
        )
        .unwrap();
        assert_eq!(o.0, "oom_killed");
        assert!(o.1.contains("2 process(es)"), "{}", o.1);
    }

    #[test]
    fn a_full_scratch_disk_is_the_cause_when_something_failed() {
        let mut full = Stopped::default();
        full.disk.free_min_bytes = Some(0);
        full.disk.peak_bytes = 3 << 20;
        let (c, p) = (cfg(), Summary::default());
        let o = outcome(&c, &p, None, &full, &measured(1, 3), (0, &[])).unwrap();
        assert_eq!(o.0, "disk_full");
        assert!(o.1.contains("filled up (3.0 MB"), "{}", o.1);
        assert_eq!(
            outcome(&c, &p, None, &full, &measured(4, 0), (0, &[])),
            None,
            "nothing failed"
        );
        let said = Stopped {
            tail: "OSError: [Errno 28] No space left on device".into(),
            ..Default::default()
        };
        let o = outcome(
            &c,
            &p,
            Some(ExitStatus::from_raw(1 << 8)),
            &said,
            &measured(0, 0),
            (0, &[]),
        );
        assert_eq!(o.unwrap().0, "disk_full", "the crash's own words");
        let mut inodes = Stopped::default();
        inodes.disk.free_min_inodes = Some(0);
        inodes.disk.fs_inodes = Some(64);
        inodes.disk.free_min_bytes = Some(1 << 30);
        let o = outcome(&c, &p, None, &inodes, &measured(0, 2), (0, &[])).unwrap();
        assert!(
            o.0 == "disk_full" && o.1.contains("ran out of inodes"),
            "{o:?}"
        );
    }

    #[test]
    fn the_exit_status_names_kill_threads_or_crash() {
        assert_eq!(exited(None, ""), None);
        assert_eq!(
            exited(Some(ExitStatus::from_raw(9)), "").unwrap().0,
            "oom_killed"
        );
        let threads = exited(
            Some(ExitStatus::from_raw(1 << 8)),
            "RuntimeError: can't start new thread",
        );
        assert_eq!(threads.unwrap().0, "thread_exhaustion");
        assert_eq!(
            exited(Some(ExitStatus::from_raw(1 << 8)), "Traceback")
                .unwrap()
                .0,
            "crashed"
        );
    }

    #[test]
    fn timeouts_integrity_and_errors_in_that_order() {
        let c = cfg();
        let p = Summary::default();
        let late = Measured {
            timed_out: true,
            ..measured(1, 1)
        };
        assert_eq!(
            outcome(&c, &p, None, &Stopped::default(), &late, (1, &[]))
                .unwrap()
                .0,
            "timeout"
        );
        assert_eq!(
            outcome(&c, &p, None, &Stopped::default(), &measured(1, 1), (1, &[]))
                .unwrap()
                .0,
            "integrity"
        );
        let kinds = [("reasoning".to_string(), 2)];
        let r = outcome(
            &c,
            &p,
            None,
            &Stopped::default(),
            &measured(1, 1),
            (2, &kinds),
        )
        .unwrap();
        assert!(
            r.1.starts_with("2 integrity violation(s) (2 reasoning: thinking blocks"),
            "{}",
            r.1
        );
        let e = outcome(&c, &p, None, &Stopped::default(), &measured(1, 1), (0, &[])).unwrap();
        assert_eq!(e.0, "error_rate");
        assert!(e.1.contains("1 of 2 sessions failed"), "{}", e.1);
        assert_eq!(
            outcome(&c, &p, None, &Stopped::default(), &measured(2, 0), (0, &[])),
            None
        );
        assert_eq!(
            error_rate(&measured(0, 0), 0.0),
            None,
            "no sessions, no rate"
        );
        assert_eq!(
            error_rate(&measured(9, 1), 0.2),
            None,
            "within the threshold"
        );
    }

    #[test]
    fn ideal_is_the_median_session_plus_think_time() {
        let ledger = serde_json::json!({"sessions": {
            "a": {"llm_ms": 100.0}, "b": {"llm_ms": 300.0}, "c": {"llm_ms": 200.0},
            (mock::ledger::ANONYMOUS): {"llm_ms": 9999.0}
        }});
        let none = Default::default();
        assert_eq!(ideal_session_ms(&ledger, 50.0, &none), Some(250.0));
        assert_eq!(ideal_session_ms(&serde_json::json!({}), 50.0, &none), None);
        // Sessions that failed early asked for less: they are left out.
        let failed = ["a".to_string(), "c".to_string()].into_iter().collect();
        assert_eq!(ideal_session_ms(&ledger, 50.0, &failed), Some(350.0));
    }

    #[test]
    fn late_mock_or_driver_makes_a_step_harness_bound() {
        assert_eq!(bound(1.0, 1.0, 25.0, Some(100.0)), "sut");
        assert_eq!(bound(30.0, 1.0, 25.0, Some(100.0)), "harness");
        assert_eq!(bound(1.0, 30.0, 25.0, None), "harness");
        // 15 ms late on 7.8-second turns is not material.
        assert_eq!(bound(15.0, 1.0, 10.0, Some(7800.0)), "sut");
    }
}
