//! What an agent worker said of its jobs (LiveKit Agents' log), a note each: the jobs it
//! took, marked full, calls waiting for a process, its event loops blocked, its voice
//! activity detector behind real time.

use crate::findings::at_load;
use result::budget::num;
use result::words::count;
use result::worker::{WorkerLog, LOAD_WINDOW_S};

/// The calls a worker took inside one load window before its load showed them: the
/// reason a burst of calls overloads it.
pub fn burst(calls: u64) -> String {
    format!(
        "it had taken {} within {} s (one load window) before its load showed them",
        count(calls, "call"),
        num(LOAD_WINDOW_S)
    )
}

/// What the worker said over a step, a sentence each; none where it said nothing of its
/// jobs.
pub fn notes(w: &WorkerLog) -> Vec<String> {
    if !w.said() {
        return Vec::new();
    }
    let mut out = vec![match w.most_in_window {
        n @ 2.. => format!(
            "took {}, {n} of them within one load window ({} s)",
            count(w.jobs, "job"),
            num(LOAD_WINDOW_S)
        ),
        _ => format!("took {}", count(w.jobs, "job")),
    }];
    if w.full > 0 {
        let mut full = format!(
            "marked itself full {} {}: the server sends it no call while it is",
            count(w.full, "time"),
            at_load(w.full_load, w.threshold)
        );
        if w.admitted_in_window >= 2 {
            full.push_str(&format!("; {}", burst(w.admitted_in_window)));
        }
        out.push(full);
    }
    if w.waited_for_process > 0 {
        out.push(format!(
            "{} waited for a job process to be started (every warm one was taken: num_idle_processes)",
            count(w.waited_for_process, "call")
        ));
    }
    if let (n @ 1.., Some(max)) = (w.loop_blocked, w.loop_blocked_max_ms) {
        out.push(format!(
            "its event loops were blocked {} past its loop monitor's threshold, the longest {} ms: audio and turns wait meanwhile",
            count(n, "time"),
            num(max)
        ));
    }
    if w.vad_behind > 0 {
        out.push(format!(
            "its voice activity detector fell behind real time {}: it hears the caller late",
            count(w.vad_behind, "time")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_thing_a_worker_said_is_a_note() {
        let w = WorkerLog {
            jobs: 2,
            full: 1,
            full_load: Some(0.74),
            threshold: Some(0.7),
            admitted_in_window: 2,
            most_in_window: 2,
            waited_for_process: 1,
            vad_behind: 3,
            loop_blocked: 2,
            loop_blocked_max_ms: Some(360.0),
        };
        assert_eq!(
            notes(&w),
            vec![
                "took 2 jobs, 2 of them within one load window (2.5 s)".to_string(),
                "marked itself full 1 time at load 0.74 (its load_threshold 0.7): the server sends it no call while it is; it had taken 2 calls within 2.5 s (one load window) before its load showed them".into(),
                "1 call waited for a job process to be started (every warm one was taken: num_idle_processes)".into(),
                "its event loops were blocked 2 times past its loop monitor's threshold, the longest 360 ms: audio and turns wait meanwhile".into(),
                "its voice activity detector fell behind real time 3 times: it hears the caller late".into(),
            ]
        );
    }

    #[test]
    fn a_worker_that_said_little_gets_few_notes() {
        let one = WorkerLog {
            jobs: 1,
            most_in_window: 1,
            full: 1,
            admitted_in_window: 1,
            ..Default::default()
        };
        assert_eq!(
            notes(&one),
            vec![
                "took 1 job".to_string(),
                "marked itself full 1 time at its load_threshold: the server sends it no call while it is".into(),
            ]
        );
        assert!(notes(&WorkerLog::default()).is_empty());
    }
}
