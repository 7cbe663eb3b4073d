//! Why a step's outcome is not ok, in words that point at what happened: "the SUT exited
//! during the step (exit status: 1)", "1 of 2 sessions failed (threshold 0); first: …".

use result::cause::{Cause, Corrupted};
use result::ladder::Collapse;
use result::words::count;

/// The cause, with the SUT's last output under it where the step kept one.
pub fn with_output(c: &Cause, last_output: Option<&str>) -> String {
    match last_output {
        Some(o) => format!("{}\nlast SUT output, {o}", said(c)),
        None => said(c),
    }
}

/// Why a ladder collapsed: the worker's refusal, then the step's cause with the SUT's
/// last output; None when neither is known.
pub fn collapse(c: &Collapse) -> Option<String> {
    let worker = c.worker.as_ref().map(crate::wall::worker_refusal);
    let cause = c
        .cause
        .as_ref()
        .map(|x| with_output(x, c.last_output.as_deref()));
    match (worker, cause) {
        (Some(w), Some(c)) => Some(format!("{w}; {c}")),
        (w, c) => w.or(c),
    }
}

/// The cause in words.
pub fn said(c: &Cause) -> String {
    match c {
        Cause::Unknown { why } => why.clone(),
        Cause::CgroupOom { kills } => format!(
            "the kernel OOM-killed {} in the SUT's cgroup (memory.events / memory.oom_control)",
            count(*kills, "process")
        ),
        Cause::Killed { status } => format!("the SUT was killed by SIGKILL ({status}) under load; the kernel's OOM killer is the usual sender"),
        Cause::NoThreads => "the SUT could not create more threads (see its last output)".into(),
        Cause::Exited { status } => format!("the SUT exited during the step ({status})"),
        Cause::OutOfInodes { files, inodes } => format!("the filesystem of the SUT's scratch directory ran out of inodes ({files} files there at peak; {inodes} inodes in all)"),
        Cause::ScratchFull { mb, files, said } => format!(
            "the filesystem of the SUT's scratch directory filled up ({mb:.1} MB and {files} files there at peak{})",
            if *said { "; its output says \"No space left on device\"" } else { "" }
        ),
        Cause::NoSpaceSaid { free_mb } => format!(
            "the SUT's output says \"No space left on device\": a filesystem it writes to filled up (its scratch directory's had {} MB free at the least)",
            free_mb.map_or("?".to_string(), |b| format!("{b:.0}"))
        ),
        Cause::TimedOut { unit, after_s, at } => format!(
            "{} were still running after the step timeout{}{}",
            unit.many(),
            after_s.map_or(String::new(), |t| format!(" of {t} s")),
            at.as_ref().map_or(String::new(), |w| format!(" ({w})"))
        ),
        Cause::Integrity { violations, kinds, what } => integrity(*violations, kinds, what),
        Cause::ErrorRate { unit, failed, total, threshold, first } => format!(
            "{failed} of {} failed (threshold {threshold}){}",
            count(*total, unit.one()),
            first.as_ref().map_or(String::new(), |(kind, what)| format!("; first: {kind}: {what}"))
        ),
        Cause::Recorded { said } => said.clone(),
    }
}

fn integrity(violations: u64, by_kind: &[(String, u64)], what: &Corrupted) -> String {
    let kinds: Vec<String> = by_kind
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| match k.as_str() {
            "reasoning" => format!("{n} reasoning: thinking blocks or reasoning items dropped, moved or altered before they came back"),
            _ => format!("{n} {k}"),
        })
        .collect();
    let kinds = match kinds.is_empty() {
        true => String::new(),
        false => format!(" ({})", kinds.join("; ")),
    };
    let what = match what {
        Corrupted::Bus => "the bus lost, duplicated or reordered messages".to_string(),
        // The session file's doing: one value for every session is one conversation.
        Corrupted::SharedValues { fields } => format!(
            "every session sent the same value in a field that names a conversation ({}), so the SUT kept one conversation for all of them — the session file's doing, not the SUT's: give each session its own (`{{{{session}}}}`, or `{{{{uuid}}}}` where the SUT wants a UUID)",
            fields.join("; ")
        ),
        Corrupted::Conversations => "the SUT's conversations were corrupted".to_string(),
    };
    format!(
        "{}{kinds}: {what}",
        count(violations, "integrity violation")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::wall::WorkerRefusal;
    use result::words::Unit;
    use result::Outcome;

    #[test]
    fn a_crash_is_said_with_the_sut_output_under_it() {
        let c = Cause::Exited {
            status: "exit status: 1".into(),
        };
        assert_eq!(
            with_output(&c, Some("cause: ValueError: no key")),
            "the SUT exited during the step (exit status: 1)\nlast SUT output, cause: ValueError: no key"
        );
        let timed = Cause::TimedOut {
            unit: Unit::Call,
            after_s: Some(300.0),
            at: Some("shard 1".into()),
        };
        assert_eq!(
            said(&timed),
            "calls were still running after the step timeout of 300 s (shard 1)"
        );
        let none_free = Cause::NoSpaceSaid { free_mb: None };
        assert!(said(&none_free).ends_with("(its scratch directory's had ? MB free at the least)"));
    }

    #[test]
    fn a_collapse_says_the_worker_then_the_step() {
        let mut c = Collapse {
            concurrency: 4,
            outcome: Outcome::ErrorRate,
            cause: Some(Cause::ErrorRate {
                unit: Unit::Call,
                failed: 2,
                total: 4,
                threshold: 0.0,
                first: Some(("timeout".into(), "call c1 turn 1: never answered".into())),
            }),
            last_output: None,
            worker: Some(WorkerRefusal::Marked {
                load: Some(0.93),
                threshold: Some(0.7),
            }),
        };
        assert_eq!(collapse(&c).unwrap(), "the worker refused calls at load 0.93 (its load_threshold 0.7); 2 of 4 calls failed (threshold 0); first: timeout: call c1 turn 1: never answered");
        c.worker = None;
        assert!(collapse(&c).unwrap().starts_with("2 of 4 calls failed"));
        c.cause = None;
        assert_eq!(collapse(&c), None);
    }

    #[test]
    fn a_cause_recorded_as_words_reads_as_it_was_said() {
        let old = r#"{"concurrency":8,"outcome":"crashed","cause":"the SUT exited during the step (signal: 11)"}"#;
        let c: Collapse = serde_json::from_str(old).unwrap();
        assert_eq!(
            collapse(&c).unwrap(),
            "the SUT exited during the step (signal: 11)"
        );
        let typed = serde_json::to_value(&c).unwrap();
        assert_eq!(typed["cause"]["cause"], "recorded");
        let none: Collapse =
            serde_json::from_str(r#"{"concurrency":8,"outcome":"crashed","cause":null}"#).unwrap();
        assert_eq!(none.cause, None);
    }
}
