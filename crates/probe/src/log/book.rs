//! What a SUT printed over one step: every line counted, warning and error lines grouped
//! into kinds (by their masked message) with a count and the first example, the last
//! lines kept, bounded; a Python traceback after an error line names the line's kind by
//! its exception; what it prints once Plimsoll stops it is its shutdown, counted apart.
//! Reading a line's level is `level`'s business, masking it `mask`'s, an agent worker's
//! lines about its jobs `worker`'s.

use super::level::{json_of, level_in, message_in, Level};
use super::mask::{mask, strip_ansi};
use super::worker::WorkerBook;
use std::collections::{BTreeMap, VecDeque};

/// Lines kept of the log (the newest), to write beside a step's results.
pub const KEEP: usize = 2000;
/// Kinds kept per step (the most frequent are reported).
const KINDS: usize = 200;

/// One kind of warning or error line: how often, and the first one seen.
#[derive(Clone, Debug, PartialEq)]
pub struct Kind {
    pub count: u64,
    pub example: String,
}

/// What a SUT printed over one step.
#[derive(Clone, Debug, Default)]
pub struct LogBook {
    pub lines: u64,
    pub warnings: u64,
    pub errors: u64,
    /// (level, masked message) → kind.
    pub kinds: BTreeMap<(Level, String), Kind>,
    pub kept: VecDeque<String>,
    /// Warning or error lines of kinds beyond the `KINDS` kept (counted, not grouped).
    pub kinds_dropped: u64,
    pattern: Option<regex::Regex>,
    /// The line just before, when it was a warning or error: (level, masked, clean, kept
    /// as a kind). A traceback right after it is its traceback.
    prev: Option<(Level, String, String, bool)>,
    /// Inside a Python traceback (chained, or an exception group).
    tb: Option<Traceback>,
    /// An agent worker's lines about taking jobs.
    pub worker: WorkerBook,
    /// Plimsoll has asked the SUT to stop: what it prints now is its shutdown.
    stopping: bool,
    /// Warning and error lines (and tracebacks) printed while it stopped, not counted above.
    pub while_stopping: u64,
    /// When the first line came: the clock the worker's lines are stamped by.
    epoch: Option<std::time::Instant>,
}

/// A traceback being read: the line it belongs to (none: a bare traceback, which counts
/// as an error of its own), and the key its count is under now.
#[derive(Clone, Debug, Default)]
struct Traceback {
    base: Option<(Level, String, String)>,
    key: Option<(Level, String)>,
}

/// `module.SomeError: message` (or the name alone): a Python exception line.
fn exception_line() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"^(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Warning|Group|Iteration|Timeout|Cancelled)(?::|$)",
        )
        .expect("a valid pattern")
    })
}

impl LogBook {
    /// `pattern`: lines matching it count as warnings (when they have no level of their own).
    pub fn new(pattern: Option<regex::Regex>) -> LogBook {
        LogBook {
            pattern,
            ..LogBook::default()
        }
    }

    pub fn add(&mut self, line: &str) {
        let at = self
            .epoch
            .get_or_insert_with(std::time::Instant::now)
            .elapsed();
        self.add_at(line, at.as_secs_f64());
    }

    /// Plimsoll is stopping the SUT: the warnings and errors it prints from now on are its
    /// shutdown's (a worker's job processes ended by the signal), counted apart.
    pub fn stopping(&mut self) {
        self.stopping = true;
    }

    /// Reads one line, read `at` seconds into the step.
    pub fn add_at(&mut self, line: &str, at: f64) {
        self.lines += 1;
        if self.kept.len() == KEEP {
            self.kept.pop_front();
        }
        self.kept.push_back(line.to_string());
        let clean = strip_ansi(line);
        let json = json_of(&clean);
        if self.stopping {
            let tb = clean
                .trim_start()
                .starts_with("Traceback (most recent call last)");
            if tb || level_in(&clean, json.as_ref()).is_some() {
                self.while_stopping += 1;
            }
            return;
        }
        self.worker.see(&clean, json.as_ref(), at);
        if self.traceback(&clean) {
            self.prev = None;
            return;
        }
        let level = level_in(&clean, json.as_ref()).or_else(|| {
            self.pattern
                .as_ref()
                .is_some_and(|p| p.is_match(&clean))
                .then_some(Level::Warning)
        });
        let Some(level) = level else {
            self.prev = None;
            return;
        };
        match level {
            Level::Warning => self.warnings += 1,
            Level::Error => self.errors += 1,
        }
        // A JSON line is one kind by its message, not by the ids and timings beside it.
        let masked = mask(json.as_ref().and_then(message_in).unwrap_or(&clean));
        let kept = self.count((level, masked.clone()), &clean);
        self.prev = Some((level, masked, clean, kept));
    }

    /// Adds what another process printed (a replica of the same SUT): counts summed,
    /// kinds merged, its last lines after these.
    pub fn merge(&mut self, other: LogBook) {
        self.lines += other.lines;
        self.warnings += other.warnings;
        self.errors += other.errors;
        self.kinds_dropped += other.kinds_dropped;
        self.while_stopping += other.while_stopping;
        self.worker.merge(other.worker);
        for (key, kind) in other.kinds {
            if let Some(k) = self.kinds.get_mut(&key) {
                k.count += kind.count;
            } else if self.kinds.len() < KINDS {
                self.kinds.insert(key, kind);
            } else {
                self.kinds_dropped += kind.count;
            }
        }
        for line in other.kept {
            if self.kept.len() == KEEP {
                self.kept.pop_front();
            }
            self.kept.push_back(line);
        }
    }

    /// Counts one line of a kind; false when the kind could not be kept.
    fn count(&mut self, key: (Level, String), example: &str) -> bool {
        if let Some(k) = self.kinds.get_mut(&key) {
            k.count += 1;
        } else if self.kinds.len() < KINDS {
            let example: String = example.chars().take(300).collect();
            self.kinds.insert(key, Kind { count: 1, example });
        } else {
            self.kinds_dropped += 1;
            return false;
        }
        true
    }

    /// Reads a Python traceback's lines; true when `line` belonged to one. Each exception
    /// line (the last of a chain wins) moves the line the traceback belongs to into the
    /// kind the exception names; a bare traceback counts as an error of its own. An
    /// unindented line that is no exception ends the traceback and is read as usual.
    fn traceback(&mut self, line: &str) -> bool {
        let t = line.trim_end();
        let body = t.trim_start_matches(|c: char| c.is_whitespace() || c == '|' || c == '+');
        if body.starts_with("Traceback (most recent call last)")
            || body.starts_with("Exception Group Traceback (most recent call last)")
        {
            if self.tb.is_none() {
                let tb = match self.prev.take() {
                    Some((level, masked, clean, kept)) => Traceback {
                        key: kept.then(|| (level, masked.clone())),
                        base: Some((level, masked, clean)),
                    },
                    None => Traceback::default(),
                };
                self.tb = Some(tb);
            }
            return true;
        }
        let Some(mut tb) = self.tb.take() else {
            return false;
        };
        if exception_line().is_match(body) {
            self.exception(&mut tb, body);
            self.tb = Some(tb);
            return true;
        }
        let inside = t.is_empty()
            || t.starts_with(|c: char| c.is_whitespace() || c == '|' || c == '+')
            || t.starts_with("During handling of the above exception")
            || t.starts_with("The above exception was the direct cause");
        if inside {
            self.tb = Some(tb);
        }
        inside
    }

    /// Moves the traceback's count to the kind its exception names.
    fn exception(&mut self, tb: &mut Traceback, exc: &str) {
        let (to, example) = match &tb.base {
            Some((level, header, example)) => {
                if tb.key.is_none() {
                    return; // the line's own kind was not kept (too many kinds)
                }
                (
                    (*level, format!("{header} → {}", mask(exc))),
                    format!("{example} → {exc}"),
                )
            }
            None => ((Level::Error, mask(exc)), exc.to_string()),
        };
        match tb.key.take() {
            Some(from) => {
                if let Some(k) = self.kinds.get_mut(&from) {
                    k.count -= 1;
                    if k.count == 0 {
                        self.kinds.remove(&from);
                    }
                }
            }
            None => self.errors += 1, // a bare traceback: its first exception line
        }
        tb.key = self.count(to.clone(), &example).then_some(to);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_replicas_logs_merge_into_one_book() {
        let mut a = LogBook::new(None);
        a.add("WARNING: pool exhausted after 30 s");
        a.add("plain line");
        let mut b = LogBook::new(None);
        b.add("WARNING: pool exhausted after 12 s");
        b.add("ERROR: connection reset");
        a.merge(b);
        assert_eq!((a.lines, a.warnings, a.errors), (4, 2, 1));
        assert_eq!(a.kinds.len(), 2, "{:?}", a.kinds);
        assert_eq!(a.kinds.values().map(|k| k.count).sum::<u64>(), 3);
        assert_eq!(
            a.kept.back().map(String::as_str),
            Some("ERROR: connection reset")
        );
    }

    #[test]
    fn kinds_mask_what_varies_and_keep_one_example() {
        let mut b = LogBook::new(None);
        b.add("WARNING threads: heartbeat failed: deadline exceeded with 9 runs active");
        b.add("WARNING threads: heartbeat failed: deadline exceeded with 12 runs active");
        b.add("ERROR run 8659e0dc-3ab0-4e00-b61e-298cf2e4d382 failed");
        b.add("INFO all good");
        // LiteLLM's way: the id glued to its name, a different one every call.
        b.add("ERROR litellm_call_id=4a1e3c9b-b2b7-4f0e-9d1c-0a2b3c4d5e6f RateLimitError");
        b.add("ERROR litellm_call_id=b3f1c2a0-7c11-4d2e-8f9a-1b2c3d4e5f60 RateLimitError");
        assert_eq!((b.lines, b.warnings, b.errors), (6, 2, 3));
        assert!(b.kinds.contains_key(&(
            Level::Error,
            "ERROR litellm_call_id=… RateLimitError".to_string()
        )));
        let (key, kind) = b.kinds.iter().find(|(k, _)| k.0 == Level::Warning).unwrap();
        assert_eq!(
            key.1,
            "WARNING threads: heartbeat failed: deadline exceeded with # runs active"
        );
        assert_eq!(kind.count, 2);
        assert!(kind.example.ends_with("with 9 runs active"));
        assert!(b
            .kinds
            .contains_key(&(Level::Error, "ERROR run … failed".to_string())));
    }

    #[test]
    fn a_traceback_names_the_kind_by_its_exception() {
        let mut b = LogBook::new(None);
        for code in ["429", "500"] {
            b.add("ERROR:    Exception in ASGI application");
            b.add("Traceback (most recent call last):");
            b.add("  File \"/app/main.py\", line 12, in run");
            b.add("    await agent.run()");
            b.add("");
            b.add("During handling of the above exception, another exception occurred:");
            b.add("");
            b.add("Traceback (most recent call last):");
            b.add("  File \"/app/x.py\", line 3, in f");
            b.add(&format!(
                "openai.RateLimitError: Error code: {code} - {{'error': 'quota'}}"
            ));
        }
        b.add("ERROR:    Exception in ASGI application");
        b.add("INFO: back to normal");
        // Later, a bare traceback (a thread's): an error of its own, not the line above's.
        b.add("Exception in thread Thread-3:");
        b.add("Traceback (most recent call last):");
        b.add("  File \"/app/w.py\", line 9, in run");
        b.add("KeyError: 'job-17'");
        // An exception group, with another worker's line arriving in the middle.
        b.add("ERROR: task group failed");
        b.add("  + Exception Group Traceback (most recent call last):");
        b.add("  |   File \"/app/g.py\", line 2, in main");
        b.add("  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)");
        b.add("WARNING: worker 2 slow");
        b.add("INFO: done");
        assert_eq!((b.errors, b.warnings), (5, 1));
        assert_eq!(
            b.kinds[&(Level::Error, "KeyError: 'job-#'".to_string())].count,
            1
        );
        assert!(b.kinds.contains_key(&(
            Level::Error,
            "ERROR: task group failed → ExceptionGroup: unhandled errors in a TaskGroup (# sub-exception)".to_string()
        )));
        assert!(b
            .kinds
            .contains_key(&(Level::Warning, "WARNING: worker # slow".to_string())));
        b.kinds.retain(|k, _| k.1.contains("ASGI"));
        let keys: Vec<&String> = b.kinds.keys().map(|k| &k.1).collect();
        assert_eq!(
            keys,
            [
                "ERROR:    Exception in ASGI application",
                "ERROR:    Exception in ASGI application → openai.RateLimitError: Error code: # - {'error': 'quota'}"
            ]
        );
        let k = &b.kinds[&(Level::Error, keys[1].clone())];
        assert_eq!(k.count, 2);
        assert!(k
            .example
            .ends_with("→ openai.RateLimitError: Error code: 429 - {'error': 'quota'}"));
    }

    #[test]
    fn a_pattern_names_warnings_without_a_level_and_colour_is_ignored() {
        let mut b = LogBook::new(Some(regex::Regex::new("heartbeat .* timeout").unwrap()));
        b.add("heartbeat 3 timeout");
        b.add("\u{1b}[33mWARN\u{1b}[0m pool: exhausted");
        b.add("all fine");
        assert_eq!((b.warnings, b.errors), (2, 0));
        assert!(b
            .kinds
            .contains_key(&(Level::Warning, "WARN pool: exhausted".to_string())));
    }

    #[test]
    fn the_kept_lines_are_bounded() {
        let mut b = LogBook::new(None);
        for i in 0..KEEP + 10 {
            b.add(&format!("line {i}"));
        }
        assert_eq!(b.kept.len(), KEEP);
        assert_eq!(b.kept.front().map(String::as_str), Some("line 10"));
    }

    #[test]
    fn what_it_prints_while_stopping_is_its_shutdown_and_counted_apart() {
        let mut b = LogBook::new(None);
        b.add(r#"{"message": "received job request", "level": "INFO"}"#);
        b.add("WARNING: slow tick");
        b.stopping();
        b.add(r#"{"message": "process exited with non-zero exit code 255", "level": "ERROR"}"#);
        b.add("Traceback (most recent call last):");
        b.add("  File \"agent.py\", line 3, in <module>");
        b.add("KeyboardInterrupt");
        b.add(r#"{"message": "received job request", "level": "INFO"}"#);
        assert_eq!((b.lines, b.warnings, b.errors), (7, 1, 0));
        assert_eq!(b.while_stopping, 2, "the error line and its traceback");
        assert_eq!(b.kinds.len(), 1);
        assert_eq!(
            b.worker.log.jobs, 1,
            "a job offered while stopping is not counted"
        );
        assert_eq!(b.kept.len(), 7, "the lines are all kept");
    }

    #[test]
    fn json_lines_are_one_kind_by_their_message() {
        let mut b = LogBook::new(None);
        b.add(r#"{"message": "VAD inference is slower than realtime", "level": "WARNING", "delay": 0.18, "job_id": "AJ_WzeNm25bb7zF"}"#);
        b.add(r#"{"message": "VAD inference is slower than realtime", "level": "WARNING", "delay": 0.52, "job_id": "AJ_MejjsotZ5Jxk"}"#);
        assert_eq!(b.warnings, 2);
        let (key, kind) = b.kinds.iter().next().expect("one kind");
        assert_eq!(b.kinds.len(), 1, "{:?}", b.kinds);
        assert_eq!(key.1, "VAD inference is slower than realtime");
        assert!(
            kind.example.contains("AJ_WzeNm25bb7zF"),
            "the example is the whole line"
        );
    }
}
