//! A step's measurements put together: the evidence handed to `analysis::outcome` (which
//! names the outcome), the harness check, and the one place a RESULT is assembled from
//! the probe's samples, the sessions' side and the mock's ledger.

use crate::measured::Measured;
use crate::mock_side::MockSide;
use crate::rates::{loaded, round3, sut_cores};
use crate::rig::Rig;
use analysis::outcome::{bus_violations, harness_bound, Evidence, Exit, Scratch};
use experiment::Config;
use probe::{Stopped, Summary};
use result::{round2, Bound, Harness, Outcome, StepReport, StepResult};

/// What the SUT's side and the mock's side saw that can end a step.
fn evidence(
    cfg: &Config,
    probe: &Summary,
    died: Option<std::process::ExitStatus>,
    stopped: &Stopped,
    m: &Measured,
    side: &MockSide,
) -> Evidence {
    use std::os::unix::process::ExitStatusExt;
    let mut by_kind = side.by_kind.clone();
    let mut violations = side.violations;
    if let Some(b) = &m.bus {
        by_kind.extend(bus_violations(b));
        violations += b.violations();
    }
    let d = &stopped.disk;
    Evidence {
        unknown: None,
        oom_kills: probe.cgroup.as_ref().map_or(0, |c| c.oom_kills),
        exit: died.map(|s| Exit {
            signal: s.signal(),
            code: s.code(),
            text: s.to_string(),
        }),
        tail: stopped.tail.clone(),
        scratch: Some(Scratch {
            peak_bytes: d.peak_bytes,
            peak_files: d.peak_files,
            free_min_bytes: d.free_min_bytes,
            free_min_inodes: d.free_min_inodes,
            fs_inodes: d.fs_inodes,
        }),
        timed_out: m.timed_out,
        timeout_s: Some(cfg.timeout_s),
        timeout_where: None,
        violations,
        violations_by_kind: by_kind,
        shared_values: m.shared.clone(),
        sessions_ok: m.sessions_ok,
        sessions_failed: m.sessions_failed,
        error_rate: cfg.error_rate,
        first_errors: m.first_errors.clone(),
        unit: result::words::Unit::calls_when(m.voice.is_some()),
    }
}

pub(crate) async fn judge(
    cfg: &Config,
    rig: Rig,
    mut probe: Summary,
    died: Option<std::process::ExitStatus>,
    stopped: Stopped,
    m: Measured,
) -> StepReport {
    probe.window = m.load_window();
    let replay = rig.replay.clone();
    let think = |name: &str| match &replay {
        Some(r) => crate::replayed::think_of(r, name),
        None => m.think_ms_per_session,
    };
    let side = MockSide::read(
        &rig.mock.app.stats.snapshot(),
        &rig.mock.app.refusals,
        &rig.mock.app.ledger_summary(),
        &think,
        &m.failed_sessions,
    );
    let connections = crate::conns::connections(&probe, m.drive_window, &|p| rig.peer(p));
    rig.mock.shutdown().await.ok();
    let (dependencies, deps_cpu_s) = rig.deps.finish(probe.window, m.turns_in_window()).await;
    let found = analysis::outcome::outcome(&evidence(cfg, &probe, died, &stopped, &m, &side));
    let outcome = found.as_ref().map_or(Outcome::Ok, |f| f.0);
    // The cause first, the SUT's last output under it, not at the end of 200 lines (issue
    // 33); none under a verdict on the sessions themselves.
    let last_output = found
        .as_ref()
        .filter(|(o, _)| {
            !stopped.tail.is_empty() && !matches!(o, Outcome::Integrity | Outcome::ErrorRate)
        })
        .map(|_| probe::log::crash::digest(&stopped.tail, stopped.whole.as_deref()));
    let cause = found.map(|(_, c)| c);
    let bound = bound_of(cfg, &side, &m);
    let first_errors = m.first_errors.clone();
    let first_bodies = m.first_bodies.clone();
    let sessions_failed_in_setup = m.sessions_failed_in_setup;
    let turns_per_session = m.session_turns;
    let mut result = assemble(
        &probe,
        &stopped,
        m,
        &side,
        rig.concurrency,
        (outcome, bound),
    );
    result.connections = connections;
    result.interference = interference(&probe, result.cpu_cores, deps_cpu_s);
    // Busy only where others took CPU the SUT could have used: judged with its cap's spare.
    let busy = analysis::quota::contaminated(&result);
    if let Some(i) = result.interference.as_mut() {
        i.contaminated = busy;
    }
    result.dependencies = dependencies;
    result.cache = side.cache.clone();
    result.mock_refused = side.refused.clone();
    let sessions = (result.sessions_ok + result.sessions_failed).max(side.marked as u64);
    result.cost = crate::cost_side::cost(&side.tokens, &cfg.prices, sessions, result.turns);
    result.arm = cfg.arm.clone();
    result.replicas = (cfg.replicas > 1 && cfg.harness.is_none()).then(|| result::Replicas {
        count: cfg.replicas,
        rss_mb_per_instance: round2(result.peak_rss_mb / cfg.replicas as f64),
        cap_scope: if result.cap.is_some() { "all" } else { "none" }.into(),
    });
    StepReport {
        result,
        cause,
        last_output,
        first_errors,
        first_bodies,
        sessions_failed_in_setup,
        violations: side.violation_list.iter().take(5).cloned().collect(),
        marked_sessions: side.marked,
        log_lines: stopped.log.kept.iter().cloned().collect(),
        turns_per_session,
    }
}

/// Whether the harness, not the SUT, fell behind: a call's frames or the mock's
/// timers for voice, the driver's lag or the mock's timers otherwise.
fn bound_of(cfg: &Config, side: &MockSide, m: &Measured) -> Bound {
    match &m.voice {
        Some(v) => analysis::outcome::calls_harness_bound(
            side.late_p99_ms,
            v.frame_jitter_p99_ms,
            cfg.harness_lag_ms,
            v.frame_ms as f64,
        ),
        None => harness_bound(
            side.late_p99_ms,
            m.lag_p99_ms,
            cfg.harness_lag_ms,
            m.lat.p50_turn,
        ),
    }
}

/// The RESULT from the probe's samples (`probe` fills its own fields), the sessions'
/// side and the mock's ledger; `sessions` is the concurrency asked for.
fn assemble(
    probe: &Summary,
    stopped: &Stopped,
    m: Measured,
    side: &MockSide,
    sessions: usize,
    (outcome, bound): (Outcome, Bound),
) -> StepResult {
    // In an open model the concurrency is what the arrivals produced, not what was asked.
    let concurrency = m
        .open_model
        .map_or(sessions, |(_, peak)| (peak as usize).max(1));
    let mut r = StepResult {
        schema_version: result::SCHEMA_VERSION,
        concurrency,
        outcome,
        ..StepResult::default()
    };
    probe.fill(&mut r);
    stopped.fill(&mut r);
    sessions_side(&mut r, &m, side);
    per_session(&mut r, probe, &m);
    resources(&mut r, probe, &m);
    r.harness = Harness {
        mock_timing_error_p99_ms: round2(side.late_p99_ms),
        driver_lag_p99_ms: m.lag_p99_ms,
        cpu_share: round2(m.harness_cpu_sec / (m.wall_ms / 1000.0).max(1e-3) / own_cores()),
        bound,
        parts: m.harness_parts.clone(),
    };
    r.sessions = m.open_model.map(|_| sessions as u64);
    r.resident = m.resident.map(|n| resident(probe, n, sessions));
    r.cold_start = m
        .cold
        .filter(|_| m.session_turns.is_some_and(|t| t > 1))
        .map(|(first, later)| result::ColdStart {
            first_turn_p50_ms: first,
            later_turn_p50_ms: later,
        });
    let trend = m.full_load.and_then(|(f, _)| f.trend);
    r.latency_trend = trend.map(round3);
    r.state = Some(analysis::trust::state(
        m.sessions_failed,
        m.timed_out,
        trend,
    ));
    r.mcp = side.mcp.clone().map(|mut x| {
        x.stdio = m.mcp_stdio.clone();
        x
    });
    r.errors_by_kind = m.errors_by_kind;
    r.requests = m.requests;
    r.bus = m.bus;
    r.slow = m.slow;
    r.voice = m.voice.map(|mut v| {
        v.stages = side.stages.clone();
        v
    });
    r
}

/// The cores Plimsoll itself may use (its affinity and quota), what its share is of.
fn own_cores() -> f64 {
    drive::cores() as f64
}

/// Sessions, turns, latencies, and what the mock saw of them.
fn sessions_side(r: &mut StepResult, m: &Measured, side: &MockSide) {
    r.sessions_ok = m.sessions_ok;
    r.sessions_failed = m.sessions_failed;
    r.turns = m.turns;
    r.wall_ms = round2(m.wall_ms);
    r.p50_session_ms = m.lat.p50_session;
    r.p99_session_ms = m.lat.p99_session;
    r.p50_turn_ms = m.lat.p50_turn;
    r.p99_turn_ms = m.lat.p99_turn;
    r.p50_ttft_ms = m.lat.p50_ttft;
    r.p99_ttft_ms = m.lat.p99_ttft;
    r.ideal_session_ms = side.ideal_ms;
    r.latency_inflation = match (m.lat.p50_session, side.ideal_ms) {
        // A call's time is its speech, not the SUT's work: voice is judged by its replies.
        _ if m.voice.is_some() => None,
        _ if !m.session_ms.is_empty() => crate::replayed::inflation(&m.session_ms, &side.ideal_by),
        (Some(s), Some(i)) if i > 0.0 => Some(round2(s / i)),
        _ => None,
    };
    r.llm_calls = side.llm_calls;
    r.llm_tokens_out = side.tokens_out;
    r.injected_failures = side.injected;
    r.integrity_violations = side.violations;
    r.provider = side.provider.clone();
    r.reasoning = side.reasoning.clone();
    r.arrival_rate_per_s = m.open_model.map(|(rate, _)| rate);
    r.probe_p50_ms = m.probe.map(|p| p.0);
    r.probe_p99_ms = m.probe.map(|p| p.1);
    r.probe_failed = m.probe.map(|p| p.2);
    r.sched_delay_ms_per_s = m.sched_delay_ms_per_s;
}

/// What a session and a turn cost in memory and CPU.
fn per_session(r: &mut StepResult, probe: &Summary, m: &Measured) {
    let per_session = probe.kb_per_session(r.concurrency);
    r.rss_kb_per_session = round2(per_session);
    // What the sessions held at the peak carried, turn by turn (not over every turn of a
    // soak's churn, which would shrink towards 0 as the soak went on).
    r.rss_kb_per_turn = m
        .session_turns
        .map(|t| round2(per_session / t.max(1) as f64));
    r.cpu_ms_per_turn = (m.turns > 0).then(|| round2(probe.cpu_sec * 1000.0 / m.turns as f64));
}

/// The rate (checked against the CPU it needs and the wall time) and the resources
/// against their caps: CPU, throttling, CPU pressure, memory; the cap and the cores.
fn resources(r: &mut StepResult, probe: &Summary, m: &Measured) {
    let sut_cores = sut_cores(m);
    let l = loaded(m, probe, r.concurrency);
    let (rate, check) = analysis::trust::rate(analysis::trust::RateEvidence {
        full_load: l.full_load,
        wall: l.wall,
        cpu_ms_per_turn: r.cpu_ms_per_turn,
        cores: sut_cores,
    });
    r.turns_per_s = Some(round2(rate));
    r.cpu_cores = Some(sut_cores);
    r.cpu_of_cap = Some(round3(l.cpu_for(&check.used) / sut_cores));
    r.rate_check = Some(check);
    r.cpu_throttled = m.throttled.map(round3);
    r.mem_of_cap = match (&probe.cgroup, &m.cap) {
        (Some(cg), Some((_, c, _))) if c.mem_bytes > 0 => {
            Some(round3(cg.peak_kb as f64 * 1024.0 / c.mem_bytes as f64))
        }
        _ => None,
    };
    r.cap = m.cap.as_ref().map(|(method, c, on)| {
        // The cores it was held to; none given (no partition): the cores the sampler saw
        // it may use, its quota spread over all of them whatever was asked.
        let held = probe::cpustat::parse_list(on);
        let on = match held.is_empty() {
            true => probe.sut_cores.clone(),
            false => held.clone(),
        };
        let by = match held.is_empty() {
            true => cap::CpuBy::Quota,
            false => c.by,
        };
        result::CapInfo {
            method: (*method).into(),
            cpus: c.cpus,
            mem_mb: round2(c.mem_bytes as f64 / (1 << 20) as f64),
            cpu_by: Some(by.name().into()),
            on: (!on.is_empty()).then(|| probe::affinity::list(&on)),
        }
    });
    r.partition = m.partition.as_ref().map(|(p, method)| result::Partition {
        harness: probe::affinity::list(&p.harness),
        sut: probe::affinity::list(&p.sut),
        method: method.to_string(),
    });
    r.cpu_pressure = m.pressure.map(|(v, _)| round3(v));
    r.cpu_pressure_scope = m.pressure.map(|(_, s)| s.to_string());
}

/// What processes other than the SUT, its services and Plimsoll took of the SUT's cores
/// over the span of load: the machine's busy time on those cores less what the SUT, its
/// services (`deps_cpu_s`) and Plimsoll (when it shares the cores) used there.
fn interference(
    probe: &Summary,
    cores: Option<f64>,
    deps_cpu_s: f64,
) -> Option<result::Interference> {
    let (a, b) = probe.window?;
    let span = b - a;
    let machine = probe.machine_between(a, b)?;
    let sut = probe.cpu_between(a, b)?;
    let cores = cores.filter(|c| *c > 0.0)?;
    if span <= 0.0 || machine.cores == 0 {
        return None;
    }
    let others = (machine.busy_s - sut - machine.own_s - deps_cpu_s).max(0.0);
    let others_share = others / span / cores;
    let steal_share = machine.steal_s / span / machine.cores as f64;
    // The SUT's services and probed processes may run on Plimsoll's cores too: theirs is
    // not a neighbour's CPU (counted off both, the figure errs towards quiet).
    let harness_share = (machine.harness_cores > 0).then(|| {
        (machine.harness_others_s - deps_cpu_s).max(0.0) / span / machine.harness_cores as f64
    });
    Some(result::Interference {
        others_share: round3(others_share),
        steal_share: round3(steal_share),
        cores,
        // Judged with the whole step in hand (`analysis::quota::contaminated`).
        contaminated: false,
        rerun: false,
        harness_share: harness_share.map(round3),
    })
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
