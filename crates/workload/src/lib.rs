//! Recorded agent traffic as a workload Plimsoll can replay: OpenTelemetry GenAI traces
//! (OTLP JSON) and JSONL conversations read into sessions, turns, model calls and tool
//! executions (`read`, `group`), written as a workload file with its fingerprint
//! (`model`), summarised for a person (`summary`), and drawn for a replay — each recorded
//! session once, or sampled with a seed (`replay`) — with the two-sample test that says
//! whether a replay kept the recording's shape (`fit`).
//!
//! Pure data and arithmetic: no sockets, no clocks. The mock answers from a [`Replay`]
//! and the driver paces sessions by it; both ask it the same questions.

mod error;
pub mod fit;
pub mod group;
pub mod model;
pub mod read;
pub mod replay;
pub mod session;
pub mod summary;
pub mod tokens;

pub use error::TraceError;
pub use model::{Call, Fingerprint, Session, Source, SourceFile, ToolUse, Turn, Workload};
pub use replay::{Mode, Prompts, Replay};
pub use summary::{Distribution, Summary};

/// Reads trace and conversation files into one workload: every file's sessions, their
/// fingerprint, and the summary.
pub fn from_files(paths: &[std::path::PathBuf]) -> Result<Workload, TraceError> {
    let mut sessions = Vec::new();
    let mut files = Vec::new();
    for p in paths {
        let bytes = std::fs::read(p).map_err(|e| TraceError::unreadable(p, &e))?;
        let file = p.display().to_string();
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| TraceError::at(&file, 1, "", format!("not UTF-8 text ({e})")))?;
        sessions.extend(read::sessions(text, &file)?);
        files.push(SourceFile::of(&file, &bytes));
    }
    Ok(Workload::new(Source::of(files), sessions))
}
