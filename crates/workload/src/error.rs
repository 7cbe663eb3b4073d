//! What a trace or conversation file that cannot be read gets: one message naming the
//! file, the line and the field, and what was expected there.

use std::path::Path;

/// A trace or conversation file that cannot be used, with where and why.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{file}:{line}: {}{message}", field_prefix(field))]
pub struct TraceError {
    pub file: String,
    pub line: usize,
    /// The field as a dotted path (`resourceSpans.0.scopeSpans.0.spans.3.startTimeUnixNano`).
    pub field: String,
    pub message: String,
}

fn field_prefix(field: &str) -> String {
    match field.is_empty() {
        true => String::new(),
        false => format!("{field}: "),
    }
}

impl TraceError {
    pub fn at(file: &str, line: usize, field: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            file: file.to_string(),
            line,
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub fn unreadable(path: &Path, e: &std::io::Error) -> TraceError {
        TraceError::at(
            &path.display().to_string(),
            0,
            "",
            format!("cannot be read ({e}); give the path of an OTLP JSON or JSONL file"),
        )
    }
}
