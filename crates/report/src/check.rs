//! `plimsoll check` in words: what went wrong in its one session, each problem pointing
//! at the fix, or what went well.

use result::{Outcome, StepReport};
use std::path::Path;

/// What went wrong in a step, in words that point at the fix; empty when all is well.
/// `session_file` is where the session's requests are written.
pub fn problems(r: &StepReport, session_file: &Path) -> Vec<String> {
    let res = &r.result;
    let mut out = Vec::new();
    if let Some(cause) = &r.cause {
        if res.outcome != Outcome::ErrorRate && res.outcome != Outcome::Integrity {
            out.push(format!("the step collapsed ({}): {cause}", res.outcome));
        }
    }
    for (kind, first) in &r.first_errors {
        out.push(explain(kind, first));
    }
    // A session that failed before its first turn never asked the SUT to call the LLM.
    let before_turns = res.turns == 0
        && !r.first_errors.is_empty()
        && r.first_errors
            .iter()
            .all(|(_, m)| m.contains(" setup, request "));
    if res.llm_calls == 0 && res.sessions_ok + res.sessions_failed > 0 && !before_turns {
        out.push("the SUT never called the mock: no LLM request reached it. Does your system read OPENAI_BASE_URL / ANTHROPIC_BASE_URL (Plimsoll sets both), or is its model client configured with a URL of its own? A key in a .env file or a config can override the environment.".into());
    } else if res.llm_calls > 0 && r.marked_sessions == 0 {
        out.push(format!(
            "the mock was called {} time(s) but no session marker reached it: keep `[[plimsoll session={{{{session}}}} nonce={{{{nonce}}}} turn={{{{turn}}}}]]` in the text your system sends the LLM as the user's message ({} sends it in the body)",
            res.llm_calls,
            session_file.display()
        ));
    }
    for v in &r.violations {
        out.push(format!(
            "integrity: {} (the mock's oracle found the conversation altered: {v})",
            v["detail"].as_str().unwrap_or("a violation")
        ));
    }
    out
}

fn explain(kind: &str, first: &str) -> String {
    let what = match kind {
        k if k.starts_with("status_") => {
            "the SUT answered with an error status (its body follows): check the URL, method and body in session.toml"
        }
        "check_failed" => "a [[check]] in the session file failed on the reply",
        "extract_failed" => "a value to [extract] was not in the reply (see what it had)",
        k if k.starts_with("teardown_") => {
            "a [[teardown]] request failed (the turns went through; the session counts as ok)"
        }
        "connect" => "could not connect to the SUT: is it listening on {{port}} (PORT / PLIMSOLL_SUT_PORT)?",
        "timeout" => "a turn took longer than turn_timeout_ms (or the step's timeout_s)",
        "protocol" => "the SUT's reply broke off or was not valid HTTP",
        "config" => "a template in the session file could not be filled or its URL used",
        _ => "the turn failed",
    };
    format!("{what} — {kind}: {first}")
}

/// The warning before load on a busy machine: `others` cores in use by other processes
/// out of `cores`.
pub fn busy_machine(others: f64, cores: usize) -> String {
    format!(
        "warning: the machine is busy before load: other processes use {:.1} of its {cores} core{} ({:.0} %); a step's line may read low. Each step's interference figure says how much they took, and a ramp runs a step on a busy machine again",
        others,
        if cores == 1 { "" } else { "s" },
        100.0 * others / cores.max(1) as f64
    )
}

/// The lines of a check that found nothing wrong: what went through and what it cost.
pub fn all_well(r: &StepReport) -> Vec<String> {
    let res = &r.result;
    let mut out = Vec::new();
    out.push(format!(
        "OK: {} turn(s) went through; the SUT called the mock {} time(s) ({:.1} a turn); p50 turn {} ms, {:.1} CPU ms a turn, {:.1} MB peak RSS.",
        res.turns,
        res.llm_calls,
        res.llm_calls as f64 / res.turns.max(1) as f64,
        res.p50_turn_ms.map_or("—".into(), |v| format!("{v:.0}")),
        res.cpu_ms_per_turn.unwrap_or(0.0),
        res.peak_rss_mb
    ));
    if let Some(t) = res.p50_ttft_ms {
        out.push(format!("  time to first token {t:.0} ms (the first event with the model's text; ttft_event in the session file chooses another)"));
    }
    for (name, q) in &res.requests {
        out.push(format!(
            "  request {name}: {} ok, p50 {} ms",
            q.count,
            q.p50_ms.map_or("—".into(), |v| format!("{v:.0}"))
        ));
    }
    out.push("Next: plimsoll ramp --cpus 1".into());
    out
}
