//! What happens in a run as JSON lines (`--events FILE`), for another tool to follow while
//! it runs: a line an event, flushed as it happens, each with `event` (its kind) and `t_s`
//! (seconds since the run began). The kinds, in the order a run writes them:
//!
//! - `run`: the run's name, its config, what it counts (`sessions` or `calls`);
//! - `level`: a level begins (`concurrency`, `again`, `arm`);
//! - `second`: a second of the running level (its `concurrency`, `arm` and `level_s`, and
//!   the live view's figures: sessions, turns, in flight, the SUT's RSS, threads and CPU);
//! - `step`: the level finished: its `standing` against the budget and its `result` (the
//!   RESULT line's document);
//! - `soak`: a soak's sample (`sample`), how many so far, and its leak reading so far;
//! - `verdict`: the run's verdict (one a ladder, or an arm's ladder), as the report reads it;
//! - `end`: the run is over; nothing follows.
//!
//! The board (`board`) sends each of them as it records what the live view shows.

use result::ladder::LadderDoc;
use result::live::Tick;
use result::StepResult;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

/// A run's events file, open for appending lines.
pub struct Events {
    file: Mutex<Option<BufWriter<File>>>,
    began: Instant,
    path: String,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Events({})", self.path)
    }
}

impl Events {
    /// The file at `path`, made anew; an error that names it and the fix when it cannot be.
    pub fn create(path: &Path) -> anyhow::Result<Events> {
        let file = File::create(path).map_err(|e| {
            anyhow::anyhow!(
                "--events {}: cannot write it ({e}); give a file in a folder that exists",
                path.display()
            )
        })?;
        Ok(Events {
            file: Mutex::new(Some(BufWriter::new(file))),
            began: Instant::now(),
            path: path.display().to_string(),
        })
    }

    /// One event: its kind and fields, a line, flushed. A write that fails is said once,
    /// and the run goes on without its events.
    fn send(&self, event: &str, fields: Value) {
        // Timed under the lock: the lines' times go up in the file's order, whichever
        // thread sends (a level's seconds come from its step's sampler).
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let Some(w) = file.as_mut() else {
            return;
        };
        let mut line = json!({ "event": event, "t_s": round3(self.began.elapsed().as_secs_f64()) });
        if let (Some(o), Value::Object(f)) = (line.as_object_mut(), fields) {
            o.extend(f);
        }
        let wrote = serde_json::to_writer(&mut *w, &line)
            .map_err(std::io::Error::from)
            .and_then(|_| w.write_all(b"\n"))
            .and_then(|_| w.flush());
        if let Err(e) = wrote {
            eprintln!("--events {}: {e}; no more events are written", self.path);
            *file = None;
        }
    }

    pub fn run(&self, run: &str, config: &str, unit: &str) {
        self.send(
            "run",
            json!({ "run": run, "config": config, "unit": unit, "version": env!("CARGO_PKG_VERSION") }),
        );
    }

    pub fn level(&self, arm: Option<&str>, concurrency: usize, again: bool) {
        self.send(
            "level",
            json!({ "arm": arm, "concurrency": concurrency, "again": again }),
        );
    }

    pub fn second(&self, arm: Option<&str>, concurrency: usize, t: &Tick) {
        let mut fields = json!({ "arm": arm, "concurrency": concurrency });
        if let (Some(o), Ok(Value::Object(mut tick))) =
            (fields.as_object_mut(), serde_json::to_value(t))
        {
            // The tick's own time is the level's; `t_s` is the run's, as on every line.
            if let Some(at) = tick.remove("t_s") {
                o.insert("level_s".into(), at);
            }
            o.extend(tick);
        }
        self.send("second", fields);
    }

    pub fn step(&self, arm: Option<&str>, result: &StepResult, standing: &str, again: bool) {
        self.send(
            "step",
            json!({
                "arm": arm,
                "concurrency": result.concurrency,
                "again": again,
                "standing": standing,
                "result": result,
            }),
        );
    }

    pub fn soak(&self, doc: &result::soak::SoakDoc) {
        self.send(
            "soak",
            json!({
                "samples": doc.series.len(),
                "sample": doc.series.last(),
                "analysis": words::json::soak_analysis(&doc.analysis),
            }),
        );
    }

    /// The run's end: a verdict for each document (none for a shard or a soak), then `end`.
    pub fn done(&self, docs: &[LadderDoc]) {
        for d in docs {
            let l = d.ladder();
            self.send(
                "verdict",
                json!({
                    "arm": d.arm,
                    "interrupted": d.interrupted.unwrap_or(false),
                    "ceiling": l.and_then(|l| l.ceiling),
                    "verdict": l.and_then(|l| l.verdict.as_ref()).map(words::json::verdict),
                }),
            );
        }
        self.send("end", json!({}));
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as a follower reads them: each a JSON object with its kind and time, in the
    /// order sent, `end` last.
    #[test]
    fn events_are_lines_of_json_in_the_order_sent() {
        let dir = std::env::temp_dir().join(format!("plimsoll-events-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("events.jsonl");
        let e = Events::create(&path).unwrap();
        e.run("r", "plimsoll.toml", "sessions");
        e.level(None, 4, false);
        e.second(
            None,
            4,
            &Tick {
                t_s: 1.0,
                turns: 12,
                ..Tick::default()
            },
        );
        let r = StepResult {
            concurrency: 4,
            ..StepResult::default()
        };
        e.step(None, &r, "holds", false);
        e.done(&[]);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["run", "level", "second", "step", "end"]);
        assert_eq!(
            (lines[2]["turns"].as_u64(), lines[2]["level_s"].as_f64()),
            (Some(12), Some(1.0))
        );
        assert_eq!(lines[3]["result"]["concurrency"], 4);
        assert!(lines.iter().all(|l| l["t_s"].as_f64().is_some()));
        let bad = Events::create(Path::new("/nonexistent-dir/events.jsonl"));
        assert!(bad
            .unwrap_err()
            .to_string()
            .contains("--events /nonexistent-dir/events.jsonl: cannot write it"));
    }
}
