//! Reading recorded traffic: a file is OTLP JSON — the collector's file exporter format,
//! one `ExportTraceServiceRequest` a line, or one document — read into spans (`otlp`)
//! and grouped into sessions (`crate::group`), or JSONL conversations in the OpenAI
//! message shape, one per line (`jsonl`). Which one is told by the first document's keys.

pub mod jsonl;
pub mod otlp;

use crate::session::Session;
use crate::TraceError;
use serde_json::Value;

/// Every session in one file's text.
pub fn sessions(text: &str, file: &str) -> Result<Vec<Session>, TraceError> {
    // One document over many lines (pretty-printed): read whole.
    if let Ok(doc) = serde_json::from_str::<Value>(text) {
        if doc.get("resourceSpans").is_some() {
            let mut spans = Vec::new();
            otlp::document(&doc, text, file, 1, &mut spans)?;
            return Ok(crate::group::sessions(spans));
        }
    }
    let mut spans = Vec::new();
    let mut conversations = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let doc: Value = serde_json::from_str(line).map_err(|e| {
            TraceError::at(
                file,
                n,
                "",
                format!("not JSON ({e}); each line must be one OTLP request or one conversation"),
            )
        })?;
        if doc.get("resourceSpans").is_some() {
            otlp::document(&doc, line, file, n, &mut spans)?;
        } else if doc.get("messages").is_some() {
            conversations.push(jsonl::conversation(&doc, file, n)?);
        } else {
            return Err(TraceError::at(
                file,
                n,
                "",
                "neither an OTLP request (resourceSpans) nor a conversation (messages)",
            ));
        }
    }
    let mut out = crate::group::sessions(spans);
    out.extend(conversations);
    if out.is_empty() {
        return Err(TraceError::at(
            file,
            1,
            "",
            "no session found: no GenAI span and no conversation",
        ));
    }
    Ok(out)
}
