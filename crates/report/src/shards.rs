//! The terminal's account of a merged RESULT (`plimsoll merge`, or `plimsoll run
//! --target`): what the shards added up to, the outcome and why, and what was not
//! measured because the SUT ran elsewhere.

use result::words::count;
use result::{Outcome, StepResult};

fn ms(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v}"))
}

/// The lines, in order, to print above the RESULT line.
pub fn summary_lines(
    r: &StepResult,
    cause: Option<&result::cause::Cause>,
    checks: &[result::Check],
) -> Vec<String> {
    let Some(s) = &r.shards else {
        return Vec::new();
    };
    let who = match (r.arrival_rate_per_s, r.sessions) {
        (Some(rate), Some(n)) => format!("{} arriving at {rate}/s", count(n, "session")),
        _ => count(r.concurrency as u64, "concurrent session"),
    };
    let shards = match s.count {
        1 => "one driver".to_string(),
        n => format!("{} of {n} shards", s.merged),
    };
    let late = match s.count {
        1 => String::new(),
        _ => format!(
            "; the last shard began {:.0} ms after the shared start",
            s.late_start_ms_max
        ),
    };
    // Calls are said as a step of calls says them: no session times, no ideal, no rate.
    let mut out = match &r.voice {
        Some(v) => calls_head(r, v, &shards, &late),
        None => text_head(r, &who, &shards, &late),
    };
    out.push(match (r.outcome, cause.map(words::cause::said)) {
        (Outcome::Unknown, Some(c)) => {
            format!("outcome: UNKNOWN — {c}; no latency or rate is given for part of a run")
        }
        (Outcome::Ok, _) => "outcome: ok".into(),
        (o, Some(c)) => format!("outcome: {o} — {c}"),
        (o, None) => format!("outcome: {o}"),
    });
    if r.llm_calls == 0 && r.ideal_session_ms.is_none() {
        out.push("  no shared mock was read (--mock): no integrity check, no ideal time, no LLM calls counted".into());
    } else {
        out.push(format!(
            "  mock: {}, {}, {}; its frames p99 {} ms late",
            count(r.llm_calls, "LLM call"),
            count(r.integrity_violations, "integrity violation"),
            count(r.injected_failures, "injected failure"),
            r.harness.mock_timing_error_p99_ms
        ));
    }
    for (name, q) in &r.requests {
        out.push(format!(
            "  request {name}: {} ok, p50/p99 {} / {} ms, {} failed",
            q.count,
            ms(q.p50_ms),
            ms(q.p99_ms),
            q.errors
        ));
    }
    out.push("  the SUT ran elsewhere: its memory, threads and CPU were not sampled (they read 0 in the RESULT)".into());
    out.extend(
        checks
            .iter()
            .filter(|c| c.over)
            .map(|c| format!("threshold crossed: {}", crate::checks::breach(c))),
    );
    out
}

/// A merged step of sessions: who ran, and their session times against the ideal.
fn text_head(r: &StepResult, who: &str, shards: &str, late: &str) -> Vec<String> {
    vec![format!(
        "merged {shards}: {who} — {} ok, {} failed, {} in {:.1} s; p50/p99 session {} / {} ms (ideal {} ms, inflation {}); {} turns/s{late}",
        r.sessions_ok,
        r.sessions_failed,
        count(r.turns, "turn"),
        r.wall_ms / 1000.0,
        ms(r.p50_session_ms),
        ms(r.p99_session_ms),
        ms(r.ideal_session_ms),
        ms(r.latency_inflation),
        ms(r.turns_per_s),
    )]
}

/// A merged step of calls: who called over what, then what the callers heard, in the
/// lines one process's step of calls prints.
fn calls_head(r: &StepResult, v: &result::VoiceCalls, shards: &str, late: &str) -> Vec<String> {
    let mut out = vec![format!(
        "merged {shards}: {} over {} — {} ok, {} failed in {:.1} s{late}",
        count(r.concurrency as u64, "concurrent call"),
        crate::calls::transport(v),
        r.sessions_ok,
        r.sessions_failed,
        r.wall_ms / 1000.0,
    )];
    out.extend(crate::calls::voice_lines(r, v));
    out
}

/// The budget verdict of a merged ok step: within `[budget]`, or which budgets it broke.
pub fn budget_lines(
    r: &StepResult,
    budget: &analysis::Budget,
    breaches: &[analysis::budget::Breach],
) -> Vec<String> {
    if r.outcome != Outcome::Ok {
        return Vec::new();
    }
    if breaches.is_empty() {
        return vec![format!("budget: holds ({})", budget.describe())];
    }
    let broke: Vec<String> = breaches.iter().map(|b| b.text()).collect();
    vec![format!("budget: OVER — {}", broke.join("; "))]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 64: two shards of four Twilio calls merged are said as a step of calls (the
    /// calls, the transport, the replies), not as sessions with a session time and an
    /// inflation over an ideal (which judged a phone bot's calls as 14× too slow).
    #[test]
    fn merged_calls_are_said_as_calls() {
        let r = StepResult {
            concurrency: 4,
            sessions_ok: 4,
            turns: 8,
            wall_ms: 21_500.0,
            p50_session_ms: Some(45_416.0),
            llm_calls: 8,
            voice: Some(result::VoiceCalls {
                protocol: "twilio".into(),
                calls: 4,
                turns: 8,
                response_p50_ms: Some(812.0),
                ..Default::default()
            }),
            shards: Some(result::Shards {
                count: 2,
                merged: 2,
                late_start_ms_max: 12.0,
                ..Default::default()
            }),
            ..Default::default()
        };
        let lines = summary_lines(&r, None, &[]);
        assert_eq!(
            lines[0],
            "merged 2 of 2 shards: 4 concurrent calls over Twilio Media Streams — 4 ok, 0 failed in 21.5 s; the last shard began 12 ms after the shared start"
        );
        assert!(
            lines[1].starts_with("  replies: 8 answered; response p50/p95/p99 812"),
            "{lines:?}"
        );
        assert!(!lines.iter().any(|l| l.contains("session")), "{lines:?}");
        assert!(lines.contains(&"outcome: ok".to_string()), "{lines:?}");
    }
}
