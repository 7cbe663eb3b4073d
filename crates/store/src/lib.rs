//! The history: every ramp run and each of its steps, and every soak with its series,
//! in SQLite (WAL mode), with the
//! environment it ran in, so last month's row can be found and re-rendered.
//!
//! A run is inserted when it starts (status `running`), each step when it finishes (in
//! its own transaction, so a crash loses at most the step in flight), and the run is
//! closed as `done` or `interrupted`. A run left `running` by a killed process reads
//! as interrupted. Rendering and analysis are not this crate's business.

use anyhow::Context;
use rusqlite::{params, Connection, OptionalExtension};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

pub struct History {
    db: Connection,
}

/// One run as listed by `plimsoll history`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: i64,
    pub started: String,
    pub config: String,
    pub status: String,
    pub steps: i64,
    pub ceiling: Option<i64>,
    /// Why a failed run failed (status `failed`).
    pub reason: Option<String>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL,
    config TEXT NOT NULL,
    environment TEXT NOT NULL,   -- JSON: machine, kernel, cap method, git commit of the SUT, plimsoll version
    status TEXT NOT NULL,        -- running | done | interrupted | failed
    analysis TEXT,               -- JSON, when done
    reason TEXT                  -- why, when failed
);
CREATE TABLE IF NOT EXISTS steps (
    run INTEGER NOT NULL REFERENCES runs(id),
    idx INTEGER NOT NULL,
    concurrency INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    result TEXT NOT NULL,        -- the RESULT object, JSON
    PRIMARY KEY (run, idx)
);
CREATE TABLE IF NOT EXISTS samples (
    run INTEGER NOT NULL REFERENCES runs(id),
    t_s REAL NOT NULL,           -- seconds since the SUT was ready
    sample TEXT NOT NULL         -- JSON: a soak's sample (phase, rss_kb, threads, fds, ...)
);
CREATE INDEX IF NOT EXISTS samples_run ON samples(run, t_s);
";

impl History {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: &Path) -> anyhow::Result<History> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let db = Connection::open(path)
            .with_context(|| format!("opening the history {}", path.display()))?;
        db.pragma_update(None, "journal_mode", "WAL")?;
        db.pragma_update(None, "synchronous", "NORMAL")?;
        db.execute_batch(SCHEMA)
            .context("creating the history tables")?;
        // A history made before failed runs had their reason gets the column.
        let has_reason = db.prepare("SELECT reason FROM runs LIMIT 0").is_ok();
        if !has_reason {
            db.execute_batch("ALTER TABLE runs ADD COLUMN reason TEXT")
                .context("adding runs.reason to the history")?;
        }
        Ok(History { db })
    }

    pub fn start_run(
        &self,
        started: &str,
        config: &str,
        environment: &impl Serialize,
    ) -> anyhow::Result<i64> {
        let environment = serde_json::to_value(environment)?;
        self.db.execute(
            "INSERT INTO runs (started, config, environment, status) VALUES (?1, ?2, ?3, 'running')",
            params![started, config, environment.to_string()],
        )?;
        Ok(self.db.last_insert_rowid())
    }

    pub fn add_step(&self, run: i64, idx: usize, result: &impl Serialize) -> anyhow::Result<()> {
        let result = serde_json::to_value(result)?;
        self.db.execute(
            "INSERT INTO steps (run, idx, concurrency, outcome, result) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                run,
                idx as i64,
                result["concurrency"].as_i64().unwrap_or(0),
                result["outcome"].as_str().unwrap_or(""),
                result.to_string()
            ],
        )?;
        Ok(())
    }

    /// One point of a soak's series, stored as it is taken.
    pub fn add_sample(&self, run: i64, sample: &impl Serialize) -> anyhow::Result<()> {
        let sample = serde_json::to_value(sample)?;
        self.db.execute(
            "INSERT INTO samples (run, t_s, sample) VALUES (?1, ?2, ?3)",
            params![
                run,
                sample["t_s"].as_f64().unwrap_or(0.0),
                sample.to_string()
            ],
        )?;
        Ok(())
    }

    /// A soak's series, in time order.
    pub fn samples<T: DeserializeOwned>(&self, run: i64) -> anyhow::Result<Vec<T>> {
        let mut q = self
            .db
            .prepare("SELECT sample FROM samples WHERE run = ?1 ORDER BY t_s")?;
        let out = q
            .query_map([run], |r| r.get::<_, String>(0))?
            .filter_map(|s| s.ok().and_then(|s| serde_json::from_str(&s).ok()))
            .collect();
        Ok(out)
    }

    pub fn finish_run(
        &self,
        run: i64,
        status: &str,
        analysis: &impl Serialize,
    ) -> anyhow::Result<()> {
        let analysis = serde_json::to_value(analysis)?;
        self.db.execute(
            "UPDATE runs SET status = ?2, analysis = ?3 WHERE id = ?1",
            params![run, status, analysis.to_string()],
        )?;
        Ok(())
    }

    /// A run that stopped on an error (a step that could not start, a file that could
    /// not be written): recorded as failed, with its reason, never left `running`.
    pub fn fail_run(&self, run: i64, reason: &str) -> anyhow::Result<()> {
        self.db.execute(
            "UPDATE runs SET status = 'failed', reason = ?2 WHERE id = ?1",
            params![run, reason],
        )?;
        Ok(())
    }

    pub fn runs(&self, limit: usize) -> anyhow::Result<Vec<RunRow>> {
        let mut q = self.db.prepare(
            "SELECT r.id, r.started, r.config, r.status, (SELECT COUNT(*) FROM steps s WHERE s.run = r.id),
                    json_extract(r.analysis, '$.ceiling'), r.reason
             FROM runs r ORDER BY r.id DESC LIMIT ?1",
        )?;
        let rows = q.query_map([limit as i64], |r| {
            Ok(RunRow {
                id: r.get(0)?,
                started: r.get(1)?,
                config: r.get(2)?,
                status: r.get(3)?,
                steps: r.get(4)?,
                ceiling: r.get(5)?,
                reason: r.get(6)?,
            })
        })?;
        Ok(rows
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|mut r| {
                // A run still "running" is one whose process died.
                if r.status == "running" {
                    r.status = "interrupted?".into();
                }
                r
            })
            .collect())
    }

    /// A run's stored document: environment, steps, analysis.
    pub fn run(&self, id: i64) -> anyhow::Result<Option<serde_json::Value>> {
        type Head = (
            String,
            String,
            String,
            String,
            Option<String>,
            Option<String>,
        );
        let head: Option<Head> = self
            .db
            .query_row(
                "SELECT started, config, environment, status, analysis, reason FROM runs WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .optional()?;
        let Some((started, config, env, status, analysis, reason)) = head else {
            return Ok(None);
        };
        let mut q = self
            .db
            .prepare("SELECT result FROM steps WHERE run = ?1 ORDER BY idx")?;
        let steps: Vec<serde_json::Value> = q
            .query_map([id], |r| r.get::<_, String>(0))?
            .filter_map(|s| s.ok().and_then(|s| serde_json::from_str(&s).ok()))
            .collect();
        let parse = |s: &str| serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
        Ok(Some(serde_json::json!({
            "schema_version": 1,
            "run": id,
            "started": started,
            "config": config,
            "environment": parse(&env),
            "status": status,
            "steps": steps,
            "analysis": analysis.as_deref().map(parse).unwrap_or(serde_json::Value::Null),
            "reason": reason,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_steps_round_trip_and_survive_an_unfinished_run() {
        let path = std::env::temp_dir().join(format!(
            "plimsoll-store-test-{}/history.db",
            std::process::id()
        ));
        let h = History::open(&path).unwrap();
        let run = h
            .start_run(
                "2026-11-22T00:00:00Z",
                "p.toml",
                &serde_json::json!({"cores": 2}),
            )
            .unwrap();
        h.add_step(
            run,
            0,
            &serde_json::json!({"concurrency": 10, "outcome": "ok"}),
        )
        .unwrap();
        h.add_step(
            run,
            1,
            &serde_json::json!({"concurrency": 20, "outcome": "oom_killed"}),
        )
        .unwrap();
        h.finish_run(run, "done", &serde_json::json!({"ceiling": 10}))
            .unwrap();
        let failed = h
            .start_run("2026-11-22T00:30:00Z", "r.toml", &serde_json::json!({}))
            .unwrap();
        h.fail_run(failed, "session.toml: cannot read it").unwrap();
        let other = h
            .start_run("2026-11-22T01:00:00Z", "q.toml", &serde_json::json!({}))
            .unwrap();
        drop(h);
        let h = History::open(&path).unwrap();
        let rows = h.runs(10).unwrap();
        assert_eq!(rows[0].id, other);
        assert_eq!(rows[0].status, "interrupted?");
        assert_eq!(
            (rows[1].status.as_str(), rows[1].reason.as_deref()),
            ("failed", Some("session.toml: cannot read it"))
        );
        assert_eq!(
            (rows[2].steps, rows[2].ceiling, rows[2].status.as_str()),
            (2, Some(10), "done")
        );
        let doc = h.run(run).unwrap().unwrap();
        assert_eq!(doc["steps"][1]["outcome"], "oom_killed");
        assert_eq!(doc["environment"]["cores"], 2);
        assert!(h.run(999).unwrap().is_none());
        h.add_sample(other, &serde_json::json!({"t_s": 2.0, "rss_kb": 20}))
            .unwrap();
        h.add_sample(other, &serde_json::json!({"t_s": 1.0, "rss_kb": 10}))
            .unwrap();
        let s: Vec<serde_json::Value> = h.samples(other).unwrap();
        assert_eq!(
            (s[0]["rss_kb"].as_u64(), s[1]["rss_kb"].as_u64()),
            (Some(10), Some(20))
        );
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
