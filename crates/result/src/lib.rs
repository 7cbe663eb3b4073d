//! The documents Plimsoll writes and reads, as types: the RESULT of one step (`step`,
//! `parts`, its MCP tool hop `mcp`), the kinds they name (`kinds`), the budget they are judged against (`budget`),
//! what a step found besides (`findings`), a verdict's facts (`facts`), what its LLM calls did with the prompt cache
//! and cost at a price table's prices (`cost`), the documents built from steps — a ladder
//! (`ladder`), arms side by side (`arms`), a sweep (`sweep`), a soak (`soak`), a
//! comparison (`compare`) and where each ran (`environment`), a running level's second
//! for a live view (`live`) — and the check of a RESULT
//! line against `schemas/result.v1.json` (`schema`), what an agent worker logged of taking
//! jobs (`worker`), and the words every message counts with
//! (`words`: 1 connection, 2 connections, 10,002). Types, a check and word forms only:
//! nothing here runs, measures, decides or prints.

pub mod arms;
pub mod budget;
pub mod cause;
pub mod compare;
pub mod cost;
pub mod environment;
pub mod facts;
pub mod findings;
pub mod harness;
pub mod kinds;
pub mod ladder;
pub mod live;
pub mod mcp;
pub mod parts;
pub mod schema;
pub mod serde_util;
pub mod soak;
pub mod step;
pub mod sweep;
pub mod trust;
pub mod usl;
pub mod voice;
pub mod wall;
pub mod words;
pub mod worker;
pub mod workload;

pub use budget::{Breach, Budget, Check, CheckFrom, Thresholds};
pub use cost::{
    CacheBreakKind, CacheReport, CacheTurn, Cost, CostSplit, ModelTokens, Price, PriceTable,
};
pub use findings::StepReport;
pub use kinds::{Bound, Confidence, Outcome, PointStanding, Standing, StepState, WallKind};
pub use mcp::{Mcp, McpStdio, McpTool};
pub use parts::*;
pub use step::{exit, round2, Harness, MemoryMeasure, StepResult, SCHEMA_VERSION};
pub use trust::{ColdStart, Interference, RateCheck};
pub use voice::{Crosstalk, KeptAudio, VoiceCalls, VoiceNetwork, VoiceStages};
pub use workload::{Fit, Replayed};

/// A document as its file holds it: keys in alphabetical order (as every document has
/// been written, through a JSON value), indented. A ladder's, arms' or soak's goes through
/// `words::json` first, which puts their words beside the facts.
pub fn to_file_json<T: serde::Serialize>(doc: &T) -> String {
    let v = serde_json::to_value(doc).expect("a document serializes");
    serde_json::to_string_pretty(&v).expect("a JSON value serializes")
}

/// A document on one line, keys in alphabetical order, as `--json` prints it.
pub fn to_line_json<T: serde::Serialize>(doc: &T) -> String {
    let v = serde_json::to_value(doc).expect("a document serializes");
    v.to_string()
}
