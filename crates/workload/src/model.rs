//! The workload file: its recorded sessions (`session`), where it came from, its summary
//! and its fingerprint. Written and
//! read as JSON; how traces become one is `read` and `group`'s business.

pub use crate::session::{Call, Session, ToolUse, Turn};
use crate::summary::Summary;
use crate::TraceError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The workload file's format number.
pub const FORMAT: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub format: u32,
    pub source: Source,
    /// In the order they started.
    pub sessions: Vec<Session>,
    /// The distributions a person reads, and a replay is tested against.
    pub summary: Summary,
}

/// The files a workload was derived from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub files: Vec<SourceFile>,
    /// SHA-256 over the files' own hashes in order: the workload's identity.
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// What identifies a workload in a RESULT: its source, its size and its shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub sha256: String,
    pub sessions: usize,
    pub turns: usize,
    pub calls: usize,
    /// "median/p99" of turns per session, calls per turn, output tokens per call.
    pub shape: String,
}

impl SourceFile {
    pub fn of(path: &str, bytes: &[u8]) -> SourceFile {
        SourceFile {
            path: path.to_string(),
            bytes: bytes.len() as u64,
            sha256: hex(&Sha256::digest(bytes)),
        }
    }
}

impl Source {
    pub fn of(files: Vec<SourceFile>) -> Source {
        let mut h = Sha256::new();
        for f in &files {
            h.update(f.sha256.as_bytes());
        }
        Source {
            sha256: hex(&h.finalize()),
            files,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Workload {
    /// A workload of these sessions, ordered by start, its summary computed.
    pub fn new(source: Source, mut sessions: Vec<Session>) -> Workload {
        sessions.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms).then(a.id.cmp(&b.id)));
        let first = sessions.first().map_or(0.0, |s| s.start_ms);
        for s in &mut sessions {
            // To the microsecond, from the first: epoch milliseconds carry more digits
            // than a float's text form gives back exactly.
            s.start_ms = ((s.start_ms - first) * 1000.0).round() / 1000.0;
        }
        let summary = Summary::of(&sessions);
        Workload {
            format: FORMAT,
            source,
            sessions,
            summary,
        }
    }

    pub fn fingerprint(&self) -> Fingerprint {
        let d = &self.summary;
        Fingerprint {
            sha256: self.source.sha256.clone(),
            sessions: self.sessions.len(),
            turns: self.sessions.iter().map(|s| s.turns.len()).sum(),
            calls: self.sessions.iter().map(Session::calls).sum(),
            shape: format!(
                "turns/session {}/{}, calls/turn {}/{}, output tokens/call {}/{}",
                d.turns_per_session.p50,
                d.turns_per_session.p99,
                d.calls_per_turn.p50,
                d.calls_per_turn.p99,
                d.output_tokens.p50,
                d.output_tokens.p99
            ),
        }
    }

    pub fn load(path: &Path) -> Result<Workload, TraceError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TraceError::unreadable(path, &e))?;
        let w: Workload = serde_json::from_str(&text).map_err(|e| {
            TraceError::at(
                &file,
                e.line(),
                "",
                format!("not a workload file ({e}); make one with `plimsoll workload from-traces`"),
            )
        })?;
        if w.format != FORMAT {
            return Err(TraceError::at(
                &file,
                1,
                "format",
                format!(
                    "format {} is not {FORMAT}: derive the workload again",
                    w.format
                ),
            ));
        }
        if w.sessions.is_empty() {
            return Err(TraceError::at(&file, 1, "sessions", "no session to replay"));
        }
        Ok(w)
    }

    /// Pretty JSON, one key a line: a workload file is read by people too.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}
