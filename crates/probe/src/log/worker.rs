//! An agent worker's lines about taking jobs, read as they come: LiveKit Agents' (Python
//! and Node) "received job request", "worker is at full capacity, marking as unavailable"
//! with its load and threshold, "no warmed process available for job", "VAD inference
//! is slower than realtime" and its loop monitor's "event loop blocked for 360ms", in its JSON log (`start`) or its text log (`dev`). Each line
//! is stamped with when it was read, so the jobs offered in the load window before the
//! worker first marked itself full can be counted.

use super::level::{message_in, Json};
use result::worker::{WorkerLog, LOAD_WINDOW_S};
use std::collections::VecDeque;

/// The worker's lines seen so far.
#[derive(Clone, Debug, Default)]
pub struct WorkerBook {
    pub log: WorkerLog,
    /// When the latest job requests came (seconds), those within one load window.
    recent: VecDeque<f64>,
}

impl WorkerBook {
    /// Reads one line of the SUT's log (`json`: the line's object, when it is a JSON
    /// line), read at `at` seconds.
    pub fn see(&mut self, line: &str, json: Option<&Json>, at: f64) {
        let Some(message) = message_of(line, json) else {
            return;
        };
        let w = &mut self.log;
        if message.starts_with("received job request") {
            w.jobs += 1;
            self.recent.push_back(at);
            while self.recent.front().is_some_and(|t| at - t > LOAD_WINDOW_S) {
                self.recent.pop_front();
            }
            w.most_in_window = w.most_in_window.max(self.recent.len() as u64);
        } else if message.starts_with("worker is at full capacity") {
            if w.full == 0 {
                w.admitted_in_window = self
                    .recent
                    .iter()
                    .filter(|t| at - **t <= LOAD_WINDOW_S)
                    .count() as u64;
            }
            w.full += 1;
            if let Some(load) = field(line, json, &["load"]) {
                w.full_load = higher(w.full_load, Some(load));
            }
            w.threshold = field(line, json, &["threshold", "loadThreshold"]).or(w.threshold);
        } else if message.starts_with("no warmed process available for job") {
            w.waited_for_process += 1;
        } else if message.starts_with("VAD inference is slower than realtime") {
            w.vad_behind += 1;
        } else if let Some(ms) = message
            .strip_prefix("event loop blocked for ")
            .and_then(|m| m.split("ms").next()?.trim().parse::<f64>().ok())
        {
            w.loop_blocked += 1;
            w.loop_blocked_max_ms = higher(w.loop_blocked_max_ms, Some(ms));
        }
    }

    /// Adds another process's book (a replica's): counts summed, the highest load kept.
    pub fn merge(&mut self, other: WorkerBook) {
        let (a, b) = (&mut self.log, other.log);
        a.jobs += b.jobs;
        a.full += b.full;
        a.full_load = higher(a.full_load, b.full_load);
        a.threshold = a.threshold.or(b.threshold);
        a.admitted_in_window = a.admitted_in_window.max(b.admitted_in_window);
        a.most_in_window = a.most_in_window.max(b.most_in_window);
        a.waited_for_process += b.waited_for_process;
        a.vad_behind += b.vad_behind;
        a.loop_blocked += b.loop_blocked;
        a.loop_blocked_max_ms = higher(a.loop_blocked_max_ms, b.loop_blocked_max_ms);
    }
}

/// The higher of two figures, either of which may be missing.
fn higher(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// The message of a line the worker wrote: a JSON line's `message` (or `msg`), else the
/// text after its logger's name (`… INFO livekit.agents - worker is …`); None when the
/// line is none of the worker's.
fn message_of(line: &str, json: Option<&Json>) -> Option<String> {
    let t = line.trim_start();
    if let Some(o) = json {
        return message_in(o).map(str::to_string);
    }
    if t.starts_with('{') {
        return None;
    }
    const KNOWN: [&str; 5] = [
        "received job request",
        "worker is at full capacity",
        "no warmed process available for job",
        "VAD inference is slower than realtime",
        "event loop blocked for ",
    ];
    // The phrase opens the line or follows its logger's `- ` or `: `, never mid-sentence.
    KNOWN.iter().find_map(|k| {
        let i = t.find(k)?;
        let before = t[..i].trim_end_matches(' ');
        (before.is_empty() || before.ends_with('-') || before.ends_with(':'))
            .then(|| t[i..].to_string())
    })
}

/// A number the line gives under one of `names`: a JSON field, or `name: 0.7`,
/// `"name": 0.7`, `name=0.7` in text.
fn field(line: &str, json: Option<&Json>, names: &[&str]) -> Option<f64> {
    let t = line.trim_start();
    if let Some(o) = json {
        return names.iter().find_map(|n| o.get(*n)?.as_f64());
    }
    names.iter().find_map(|n| {
        let key =
            regex::Regex::new(&format!(r#"\b"?{n}"?\s*[:=]\s*([0-9]+(?:\.[0-9]+)?)"#)).ok()?;
        key.captures(t)?.get(1)?.as_str().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::super::level::json_of;
    use super::*;

    /// One line read as the log book reads it: its JSON object once, then the worker's.
    fn read(b: &mut WorkerBook, line: &str, at: f64) {
        b.see(line, json_of(line).as_ref(), at);
    }

    #[test]
    fn a_worker_that_took_three_calls_in_one_window_then_marked_itself_full() {
        let mut b = WorkerBook::default();
        let lines = [
            (0.0, r#"{"message": "registered worker", "level": "INFO", "id": "AW_x"}"#),
            (10.0, r#"{"message": "received job request", "level": "INFO", "job_id": "AJ_1"}"#),
            (20.0, r#"{"message": "received job request", "level": "INFO", "job_id": "AJ_2"}"#),
            (20.3, r#"{"message": "received job request", "level": "INFO", "job_id": "AJ_3"}"#),
            (21.9, r#"{"message": "no warmed process available for job, waiting for one to be created", "level": "WARNING"}"#),
            (22.0, r#"{"message": "worker is at full capacity, marking as unavailable", "level": "INFO", "load": 0.93, "threshold": 0.7}"#),
            (24.0, r#"{"message": "worker is below capacity, marking as available", "level": "INFO", "load": 0.5, "threshold": 0.7}"#),
            (26.0, r#"{"message": "worker is at full capacity, marking as unavailable", "level": "INFO", "load": 0.97, "threshold": 0.7}"#),
            (27.0, r#"{"message": "VAD inference is slower than realtime", "level": "WARNING", "delay": 0.3}"#),
            (28.0, r#"{"message": "event loop blocked for 360ms at \"ssl.py\", line 770, in create_default_context; synchronous work on the agent loop delays audio", "level": "WARNING", "duration": 0.36, "threshold": 0.1}"#),
            (29.0, "2026-11-28 10:00:29,001 - WARNING livekit.agents - event loop blocked for 127ms importing numpy; import it at process warm-up"),
        ];
        for (at, l) in lines {
            read(&mut b, l, at);
        }
        let w = b.log;
        assert_eq!(
            (w.jobs, w.full, w.waited_for_process, w.vad_behind),
            (3, 2, 1, 1)
        );
        assert_eq!((w.full_load, w.threshold), (Some(0.97), Some(0.7)));
        assert_eq!((w.loop_blocked, w.loop_blocked_max_ms), (2, Some(360.0)));
        // AJ_1 came 12 s before: outside the window; AJ_2 and AJ_3 within 2.5 s of the mark.
        assert_eq!(w.admitted_in_window, 2);
        assert_eq!(w.most_in_window, 2, "AJ_2 and AJ_3");
    }

    #[test]
    fn the_text_log_of_dev_mode_and_node_field_names_are_read_too() {
        let mut b = WorkerBook::default();
        read(&mut b, "2026-11-28 10:00:01,090 - INFO livekit.agents - received job request {\"job_id\": \"AJ_1\"}", 1.0);
        read(&mut b, "2026-11-28 10:00:02,093 - INFO livekit.agents - worker is at full capacity, marking as unavailable {\"load\": 0.788, \"threshold\": 0.7}", 2.0);
        read(
            &mut b,
            r#"{"msg":"worker is at full capacity, marking as unavailable","level":30,"load":0.81,"loadThreshold":0.75}"#,
            9.0,
        );
        read(
            &mut b,
            "INFO: the user said the worker is at full capacity",
            9.5,
        );
        let w = b.log;
        assert_eq!((w.jobs, w.full, w.admitted_in_window), (1, 2, 1));
        assert_eq!((w.full_load, w.threshold), (Some(0.81), Some(0.75)));
    }

    #[test]
    fn a_log_without_a_worker_says_nothing() {
        let mut b = WorkerBook::default();
        read(
            &mut b,
            "INFO:     127.0.0.1:5000 - \"POST /chat HTTP/1.1\" 200 OK",
            1.0,
        );
        read(&mut b, r#"{"message": "request done", "load": 3}"#, 2.0);
        assert!(!b.log.said());
    }
}
