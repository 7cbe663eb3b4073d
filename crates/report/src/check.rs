//! `plimsoll check` in words: what went wrong in its sessions, each problem pointing
//! at the fix, or what went well.

use result::{Outcome, StepReport};
use std::path::Path;

/// What the session sent, for explaining what the SUT said of it.
pub struct Sent<'a> {
    /// Where the session's requests are written.
    pub file: &'a Path,
    /// The top-level keys of the first turn's JSON body, when it sends JSON.
    pub json_keys: Option<Vec<String>>,
    /// Fields that name a conversation and carry one value in every session, said as
    /// `drive::spec::SharedValue` says them.
    pub shared: Vec<String>,
}

/// What went wrong in a step, in words that point at the fix; empty when all is well.
/// Ordered by cause: the SUT's own collapse, then the requests' failures (a template,
/// the connection, a refusal, the SUT's own error, a check), then what the mock saw. A
/// problem that follows from an earlier one is said under it, not as one of its own.
pub fn problems(r: &StepReport, sent: &Sent) -> Vec<String> {
    let res = &r.result;
    let mut out = crate::mock_refused::lines(&res.mock_refused);
    if let Some(cause) = &r.cause {
        if res.outcome != Outcome::ErrorRate && res.outcome != Outcome::Integrity {
            let cause = words::cause::with_output(cause, r.last_output.as_deref());
            out.push(format!("the step collapsed ({}): {cause}", res.outcome));
        }
    }
    let mut errors: Vec<&(String, String)> = r.first_errors.iter().collect();
    errors.sort_by_key(|(kind, _)| rank(kind));
    // Replies heard on the wrong call come first: a call whose reply went elsewhere heard
    // none, and its turn timed out.
    out.extend(res.voice.as_ref().and_then(crate::calls::crosstalk_problem));
    // The first request failure's place: what follows from it is said under it.
    let first_failure = out.len();
    for (kind, first) in &errors {
        let body = r.first_bodies.get(kind.as_str()).map(String::as_str);
        let mut line = explain_sent(kind, first, body, sent);
        if kind == "timeout" {
            line.push_str(&crate::calls::timed_out_for_crosstalk(res.voice.as_ref()));
        }
        out.push(line);
    }
    // A session that failed before its first turn, or whose every turn was refused
    // (4xx) or never sent, never asked the SUT to call the LLM: that follows.
    let before_turns = res.turns == 0
        && r.sessions_failed_in_setup > 0
        && r.sessions_failed_in_setup == res.sessions_failed;
    let refused =
        res.turns == 0 && !errors.is_empty() && errors.iter().all(|(k, _)| refused_before_llm(k));
    if res.llm_calls == 0 && res.sessions_ok + res.sessions_failed > 0 && refused {
        if let Some(first) = out.get_mut(first_failure) {
            first.push_str(
                "\n     so no LLM call reached the mock: that follows from this one; fix it first",
            );
        }
    } else if res.llm_calls == 0 && res.sessions_ok + res.sessions_failed > 0 && !before_turns {
        out.push("the SUT never called the mock: no LLM request reached it. Does your system read OPENAI_BASE_URL / ANTHROPIC_BASE_URL (Plimsoll sets both), or is its model client configured with a URL of its own? A key in a .env file or a config can override the environment.".into());
    } else if res.llm_calls > 0 && r.marked_sessions == 0 && res.voice.is_some() {
        out.push("the mock was called but heard no session marker: the caller speaks it each turn, so the bot's speech-to-text must be the mock's and the transcript must reach the LLM as the user's message".into());
    } else if res.llm_calls > 0 && r.marked_sessions == 0 {
        out.push(format!(
            "the mock was called {} but no session marker reached it: keep `[[plimsoll session={{{{session}}}} nonce={{{{nonce}}}} turn={{{{turn}}}}]]` in the text your system sends the LLM as the user's message ({} sends it in the body)",
            crate::words::count(res.llm_calls, "time"),
            sent.file.display()
        ));
    }
    if let Some(v) = &res.voice {
        out.extend(crate::calls::check_problems(res, v));
    }
    if !r.violations.is_empty() && !sent.shared.is_empty() {
        out.push(shared_conversation(r, sent));
        return out;
    }
    for v in &r.violations {
        out.push(format!(
            "integrity: {} (the mock's oracle found the conversation altered: {v})",
            v["detail"].as_str().unwrap_or("a violation")
        ));
    }
    out
}

/// Integrity violations while every session sent one value for its conversation: the
/// session file made one conversation of them all, so the violations follow from it.
pub fn shared_conversation(r: &StepReport, sent: &Sent) -> String {
    format!(
        "every session sent the same value in a field that names a conversation: {} — so the SUT kept one conversation for all of them, and the mock saw one session's messages in another's ({} follow from this, not from the SUT). Give each session its own: `{{{{session}}}}`, or `{{{{uuid}}}}` where the SUT wants a UUID, in {}",
        sent.shared.join("; "),
        crate::words::count(r.result.integrity_violations.max(r.violations.len() as u64), "integrity violation"),
        sent.file.display()
    )
}

/// Which failures come first: the earlier a failure stops a request, the nearer its cause.
fn rank(kind: &str) -> u8 {
    match kind {
        "config" => 0,
        "connect" => 1,
        k if k.starts_with("status_4") => 2,
        k if k.starts_with("status_") => 3,
        "protocol" => 4,
        "timeout" => 5,
        "check_failed" | "extract_failed" => 6,
        k if k.starts_with("teardown_") => 8,
        _ => 7,
    }
}

/// A failure that happens before the SUT could ask its LLM anything.
fn refused_before_llm(kind: &str) -> bool {
    kind == "config" || kind == "connect" || kind.starts_with("status_4")
}

/// A failure explained; a refusal with a JSON body (the SUT's `body`) also with the
/// fields it names and, when the cause is likely the body's encoding, the fix.
fn explain_sent(kind: &str, first: &str, body: Option<&str>, sent: &Sent) -> String {
    let mut line = explain(kind, first);
    let Some(body) = body.filter(|_| kind.starts_with("status_4")) else {
        return line;
    };
    let named = crate::refusal::named_fields(body);
    if !named.is_empty() {
        line.push_str(&format!(
            "\n     the SUT names {}",
            crate::refusal::fields_line(&named)
        ));
        if let Some(hint) = crate::refusal::missing_hint(&named, sent.json_keys.as_deref()) {
            line.push_str(&format!("\n     fix: {hint}"));
        }
    } else if let Some(m) = crate::refusal::message(body) {
        line.push_str(&format!("\n     the SUT says: {m}"));
    }
    line
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
    if let Some(v) = &res.voice {
        return vec![
            crate::calls::all_well(res, v),
            "Next: plimsoll ramp --cpus 1".into(),
        ];
    }
    out.push(format!(
        "OK: {} went through in {} side by side; the SUT called the mock {} ({:.1} a turn); p50 turn {} ms, {:.1} CPU ms a turn, {:.1} MB peak RSS.",
        crate::words::count(res.turns, "turn"),
        crate::words::count(res.sessions_ok, "session"),
        crate::words::count(res.llm_calls, "time"),
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

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
