//! The lines a person reads about a replayed workload: which recording (its fingerprint),
//! how it was replayed, how faithfully the system under test followed it, and whether
//! the replayed shape is the recorded one.

use result::words::count;
use result::Replayed;

/// `workload 350ffb58… (24 sessions, 85 turns, 220 calls recorded) replayed exact …`.
pub fn lines(w: &Replayed) -> Vec<String> {
    let short = &w.sha256[..w.sha256.len().min(12)];
    let how = match w.mode.as_str() {
        "exact" => format!("exact at speed {}", w.speed),
        _ => "sampled".to_string(),
    };
    let tokens = match w.output_tokens_recorded {
        0 => "no recorded output tokens".to_string(),
        n => format!(
            "output tokens {} of {} recorded ({:+.1} %)",
            w.output_tokens,
            n,
            (w.output_tokens as f64 / n as f64 - 1.0) * 100.0
        ),
    };
    let mut out = vec![
        format!(
            "workload {short} ({}, {}, {} recorded; {}) replayed {how}",
            count(w.recorded_sessions, "session"),
            count(w.recorded_turns, "turn"),
            count(w.recorded_calls, "call"),
            w.shape
        ),
        format!(
            "  followed: {} of {} as recorded (calls per turn, tools in order); calls {} of {} recorded; {tokens}; pauses late p99 {} ms",
            w.sessions_as_recorded,
            count(w.sessions, "session"),
            w.calls,
            w.calls_recorded,
            w.think_late_p99_ms
        ),
    ];
    if !w.differences.is_empty() {
        out.push(format!(
            "  where {} left the recording (its first difference):",
            match w.sessions - w.sessions_as_recorded {
                1 => "1 session".to_string(),
                n => format!("{n} sessions"),
            }
        ));
        for d in &w.differences {
            out.push(format!("    {d}"));
        }
    }
    if !w.fit.is_empty() {
        let tests: Vec<String> = w
            .fit
            .iter()
            .map(|(name, f)| {
                let said = if f.same { "same" } else { "DIFFERENT" };
                format!("{name} D {:.3} p {:.3} {said}", f.d, f.p)
            })
            .collect();
        out.push(format!(
            "  shape against the recording (two-sample KS, p < 0.05 differs): {}",
            tests.join("; ")
        ));
    }
    out
}
