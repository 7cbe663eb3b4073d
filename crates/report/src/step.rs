//! One step on the terminal (`plimsoll run`): the step line, its outcome, and a line for
//! each part it measured (the probe, the provider, reasoning, the prompt cache and cost,
//! slow consumers, residents, connections, dependencies, replicas, named requests, the
//! SUT's log, errors, integrity, thresholds, a harness-bound warning). It reads the
//! step's report only.

use result::{Bound, StepReport, StepResult};

/// The lines printed above the RESULT line, in order.
pub fn lines(step: &StepReport, checks: &[result::Check]) -> Vec<String> {
    let r: &StepResult = &step.result;
    let mut out = crate::mock_refused::lines(&r.mock_refused);
    out.extend(head(step));
    out.push(match &step.cause {
        Some(c) => format!(
            "outcome: {} — {}",
            r.outcome,
            words::cause::with_output(c, step.last_output.as_deref())
        ),
        None => "outcome: ok".into(),
    });
    out.extend(parts(r));
    for (kind, first) in &step.first_errors {
        out.push(format!("  error {kind} (first seen): {first}"));
    }
    for v in &step.violations {
        out.push(format!("  integrity: {v}"));
    }
    for c in checks.iter().filter(|c| c.over) {
        out.push(format!("threshold crossed: {}", crate::checks::breach(c)));
    }
    if r.harness.bound == Bound::Harness {
        out.push(format!(
            "HARNESS-BOUND: Plimsoll itself was the bottleneck (mock lateness p99 {} ms, driver lag p99 {} ms); these figures describe the harness, not the SUT. Lower the concurrency or give the harness more CPU.",
            r.harness.mock_timing_error_p99_ms, r.harness.driver_lag_p99_ms
        ));
    }
    out
}

/// The turns a session ran: the session file's (with `--set turns=…`), or a replay's range
/// as recorded ("2–5 turns as recorded").
fn turns_run(step: &StepReport) -> String {
    match (
        step.turns_per_session,
        step.result.workload.as_ref().and_then(|w| w.turns_ran),
    ) {
        (Some(t), _) => crate::words::count(t, "turn"),
        (None, Some((a, b))) if a == b => format!("{} as recorded", crate::words::count(a, "turn")),
        (None, Some((a, b))) => format!("{a}–{b} turns as recorded"),
        (None, None) => "? turns".to_string(),
    }
}

/// The step line (or a bus's lines): who was driven, how it went, what it cost.
fn head(step: &StepReport) -> Vec<String> {
    let r = &step.result;
    let mut out = Vec::new();
    let who = match (r.arrival_rate_per_s, r.sessions) {
        (Some(rate), Some(n)) => format!(
            "{} arriving at {rate}/s (at most {} in flight)",
            crate::words::count(n, "session"),
            r.concurrency
        ),
        _ => crate::words::count(r.concurrency as u64, "concurrent session"),
    };
    if let Some(v) = &r.voice {
        out.extend(crate::calls::step_lines(r, v, &turns_run(step)));
    } else if let Some(b) = &r.bus {
        for line in crate::bus::lines(b) {
            out.push(line);
        }
        out.push(format!(
            "  connections: {} ok, {} failed in {:.1} s; the broker's peak RSS {:.1} MB, {}, {:.2} CPU s",
            r.sessions_ok,
            r.sessions_failed,
            r.wall_ms / 1000.0,
            r.peak_rss_mb,
            crate::words::count(r.peak_threads, "thread"),
            r.cpu_sec
        ));
    } else {
        out.push(format!(
        "step: {who} × {} — {} ok, {} failed in {:.1} s; p50/p99 session {} / {} ms (ideal {} ms, inflation {}); peak RSS {:.1} MB ({:+.1} KB/session), {}, {} CPU ms/turn",
        // The turns a session ran (`--set turns=10` runs 10), not the file's.
        turns_run(step),
        r.sessions_ok,
        r.sessions_failed,
        r.wall_ms / 1000.0,
        opt(r.p50_session_ms),
        opt(r.p99_session_ms),
        opt(r.ideal_session_ms),
        opt(r.latency_inflation),
        r.peak_rss_mb,
        r.rss_kb_per_session,
        crate::words::count(r.peak_threads, "thread"),
        opt(r.cpu_ms_per_turn),
    ));
    }
    out
}

/// A line for each part of the RESULT that has something to say.
fn parts(r: &StepResult) -> Vec<String> {
    let mut out = the_llm_side(r);
    if let Some(w) = &r.workload {
        out.extend(crate::workload::lines(w));
    }
    out.extend(sessions_held(r));
    out.extend(around_the_sut(r));
    out.extend(requests_and_log(r));
    out.extend(crate::mcp::step_lines(r));
    if let Some(p) = &r.harness.parts {
        out.push(format!("  {}", crate::harness::line(p)));
    }
    out
}

/// The SUT's own cgroup's memory, where it had one: its high mark, and by kind what the
/// kernel counts once (anonymous pages) apart from what it takes back (the page cache).
fn cgroup_line(r: &StepResult) -> Option<String> {
    let peak = r.cgroup_mem_peak_mb?;
    let kinds = match (r.cgroup_anon_peak_mb, r.cgroup_file_peak_mb) {
        (Some(a), Some(f)) => format!(
            " — {a:.0} MB anonymous (the processes' own pages, each once), {f:.0} MB file (page cache the kernel takes back)"
        ),
        _ => String::new(),
    };
    let ooms = match r.cgroup_oom_kills.unwrap_or(0) {
        0 => String::new(),
        n => format!("; {}", crate::words::count(n, "OOM kill")),
    };
    Some(format!(
        "  cgroup (the SUT's own): peak {peak:.0} MB{kinds}{ooms}"
    ))
}

/// The responsiveness probe, the provider's pushback, what reasoning cost, the prompt
/// cache and the provider's bill.
fn the_llm_side(r: &StepResult) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(p50), Some(p99)) = (r.probe_p50_ms, r.probe_p99_ms) {
        out.push(format!(
            "  probe: p50/p99 {p50} / {p99} ms; the SUT's threads waited {} ms a second for a CPU",
            opt(r.sched_delay_ms_per_s)
        ));
    }
    if let Some(p) = &r.provider {
        out.push(format!("  {}", provider_line(p, r.llm_calls)));
    }
    if let Some(x) = &r.reasoning {
        out.push(format!(
            "  reasoning: {} of {} reasoned ({} tokens, {} each); the provider's first token came at {:.0} ms, the answer's at {:.0} ms (means)",
            x.replies,
            crate::words::count(r.llm_calls, "LLM call"),
            x.reasoning_tokens,
            x.reasoning_tokens / x.replies.max(1),
            x.first_token_ms,
            x.first_answer_token_ms
        ));
    }
    out.extend(crate::cost::step_lines(r));
    out
}

/// Slow consumers and resident sessions.
fn sessions_held(r: &StepResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &r.slow {
        out.push(format!(
            "  slow consumers: {} ({:.0} %) reading {:.0} B/s, p50 session {} ms; the others p50/p99 {} / {} ms",
            crate::words::count(s.sessions, "session"),
            s.share * 100.0,
            s.read_bps,
            opt(s.p50_session_ms),
            opt(s.others_p50_session_ms),
            opt(s.others_p99_session_ms)
        ));
    }
    if let Some(res) = &r.resident {
        let f = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.1}"));
        out.push(format!(
            "  resident: {} open ({} MB RSS with all open), {} active at a time; {} KB per resident session, {} KB per active one",
            crate::words::count(res.sessions, "session"),
            f(res.rss_mb_open),
            res.active,
            f(res.kb_per_resident),
            f(res.kb_per_active)
        ));
    }
    out
}

/// The SUT's connections, its dependencies, its replicas.
fn around_the_sut(r: &StepResult) -> Vec<String> {
    let mut out: Vec<String> = r.thread_cpu.iter().filter_map(thread_line).collect();
    out.extend(cgroup_line(r));
    if !r.connections.is_empty() {
        let each: Vec<String> = r
            .connections
            .iter()
            .map(|c| {
                let who = c.peer.clone().unwrap_or_else(|| format!(":{}", c.port));
                format!("{who} {} (mean {:.1})", c.peak, c.mean)
            })
            .collect();
        out.push(format!("  connections (peak): {}", each.join(", ")));
    }
    for d in &r.dependencies {
        out.push(format!(
            "  {} {}: {}, {:.1} MB RSS, {}, {} CPU ms/turn, {} at most{}",
            d.kind,
            d.name,
            crate::words::count(d.processes as u64, "process"),
            d.peak_rss_mb,
            crate::words::count(d.peak_threads, "thread"),
            opt(d.cpu_ms_per_turn),
            crate::words::count(d.peak_clients as u64, "client"),
            if d.exited {
                "; it EXITED during the step"
            } else {
                ""
            }
        ));
    }
    if let Some(rep) = &r.replicas {
        out.push(format!(
            "  replicas: {}, sessions spread over them by session; {:.1} MB RSS each{}",
            crate::words::count(rep.count as u64, "instance"),
            rep.rss_mb_per_instance,
            if rep.cap_scope == "all" {
                "; the cap holds all of them together"
            } else {
                ""
            }
        ));
    }
    out
}

/// Latency per named request, and the SUT's own log.
fn requests_and_log(r: &StepResult) -> Vec<String> {
    let mut out = Vec::new();
    for (name, q) in &r.requests {
        out.push(format!(
            "  request {name}: {} ok, p50/p99 {} / {} ms, {} failed",
            q.count,
            opt(q.p50_ms),
            opt(q.p99_ms),
            q.errors
        ));
    }
    if let Some(log) = r.log.as_ref().filter(|l| l.warnings + l.errors > 0) {
        out.push(format!(
            "  SUT log: {}, {}, {}",
            crate::words::count(log.lines, "line"),
            crate::words::count(log.warnings, "warning"),
            crate::words::count(log.errors, "error")
        ));
        for k in log.kinds.iter().take(5) {
            out.push(format!(
                "    {} × {} `{}`, e.g. `{}`",
                k.count, k.level, k.message, k.example
            ));
        }
    }
    if let Some(n) = r.log.as_ref().and_then(|l| l.while_stopping) {
        out.push(format!(
            "  SUT log while it stopped: {} (its shutdown, not counted above)",
            crate::words::count(n, "warning or error line")
        ));
    }
    let worker = r.log.as_ref().and_then(|l| l.worker.as_ref());
    for note in worker.map(words::worker::notes).unwrap_or_default() {
        out.push(format!("  worker: {note}"));
    }
    out
}

/// "threads: busiest `MainThread` at 97 % of a core, then `worker-1` 12 % (1 busy, 1
/// saturated)", with the time the busiest waited for a core when it was material.
fn thread_line(t: &result::ThreadCpu) -> Option<String> {
    let (first, rest) = t.busiest.split_first()?;
    let waited = match first.wait_share {
        Some(w) if w >= 0.05 => format!(" and waiting for one {:.0} %", w * 100.0),
        _ => String::new(),
    };
    let others: Vec<String> = rest
        .iter()
        .map(|b| format!("`{}` {:.0} %", b.name, b.core_share * 100.0))
        .collect();
    let then = if others.is_empty() {
        String::new()
    } else {
        format!(", then {}", others.join(", "))
    };
    Some(format!(
        "  threads: busiest `{}` at {:.0} % of a core{waited}{then} ({} busy, {} saturated)",
        first.name,
        first.core_share * 100.0,
        t.busy,
        t.saturated
    ))
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v}")).unwrap_or_else(|| "—".into())
}

/// A refusal reason of the ledger in words.
fn reason_words(reason: &str) -> &str {
    match reason {
        "quota_requests" => "requests quota",
        "quota_tokens" => "tokens quota",
        "quota_input_tokens" => "input tokens quota",
        "quota_output_tokens" => "output tokens quota",
        "overloaded" => "full queue",
        other => other,
    }
}

/// "provider (1,500 requests/min per key): 14 of 83 LLM calls refused (17 %: 14 by the
/// requests quota); the SUT resent 11 calls (amplification 1.15×); at most 8 replies in
/// flight".
fn provider_line(p: &result::Provider, calls: u64) -> String {
    let n: u64 = p.refused.values().sum();
    let by: Vec<String> = p
        .refused
        .iter()
        .map(|(k, v)| format!("{v} by the {}", reason_words(k)))
        .collect();
    let refused = if n > 0 {
        format!(
            "{n} of {} refused ({:.0} %: {}); the SUT resent {} (amplification {}×)",
            crate::words::count(calls, "LLM call"),
            p.refused_share * 100.0,
            by.join(", "),
            crate::words::count(p.retried, "call"),
            p.amplification
        )
    } else {
        format!("none of {} refused", crate::words::count(calls, "LLM call"))
    };
    let slots = if p.peak_queued > 0 || p.queue_wait_p99_ms > 0.0 {
        format!(
            "; p50/p99 wait for a slot {:.0} / {:.0} ms ({:.0} % of the provider's time), at most {} waiting",
            p.queue_wait_p50_ms,
            p.queue_wait_p99_ms,
            p.queue_share * 100.0,
            p.peak_queued
        )
    } else {
        String::new()
    };
    format!(
        "provider ({}): {refused}; at most {} replies in flight{slots}",
        p.limits, p.peak_in_flight
    )
}

/// What made a step contaminated, in words: whose cores other processes took, and how
/// much of the CPU the SUT could have used ("other processes took 35 % of the SUT's 1
/// core"; a quota's spare cores are not the SUT's to lose).
pub fn busy_words(s: &result::StepResult) -> String {
    let Some(i) = s.interference.as_ref() else {
        return String::new();
    };
    let sut = analysis::quota::denied(s).unwrap_or(0.0);
    match analysis::trust::starved_harness(sut, i.harness_share) {
        Some(h) => format!(
            "other processes took {:.0} % of Plimsoll's own cores and it fell behind",
            h * 100.0
        ),
        None => format!(
            "other processes took {:.0} % of the SUT's {}",
            sut * 100.0,
            crate::words::count_f(i.cores, "core")
        ),
    }
}
