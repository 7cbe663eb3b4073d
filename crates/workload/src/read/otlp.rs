//! OTLP JSON (the protobuf JSON mapping of `ExportTraceServiceRequest`) read into flat
//! spans: ids in hex, times in unix nanoseconds (a string of digits or a number), and
//! attributes as JSON values. Every field that is not what OTLP says names its path and
//! line. Which spans are sessions and turns is `crate::group`'s business.

use crate::TraceError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One span, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub trace: String,
    pub id: String,
    pub parent: Option<String>,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attrs: BTreeMap<String, Value>,
}

impl Span {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Value::as_str)
    }

    pub fn int(&self, key: &str) -> Option<u64> {
        match self.attrs.get(key)? {
            Value::Number(n) => n.as_u64().or(n.as_f64().map(|f| f.max(0.0) as u64)),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }
}

/// Where a field of one document is: the file, the document's first line, and (for a
/// document over many lines) the line of the span being read.
struct At<'a> {
    file: &'a str,
    text: &'a str,
    line: usize,
}

impl At<'_> {
    fn err(&self, line: usize, field: &str, message: impl Into<String>) -> TraceError {
        TraceError::at(self.file, line, field, message)
    }

    /// The line of a span in a document over many lines: where its id first appears.
    fn line_of(&self, id: Option<&str>) -> usize {
        match id.filter(|i| !i.is_empty()) {
            Some(id) => self.text.find(id).map_or(self.line, |off| {
                self.line + self.text[..off].matches('\n').count()
            }),
            None => self.line,
        }
    }
}

/// Every span of one `ExportTraceServiceRequest`.
pub fn document(
    doc: &Value,
    text: &str,
    file: &str,
    line: usize,
    out: &mut Vec<Span>,
) -> Result<(), TraceError> {
    let at = At { file, text, line };
    for (r, rs) in array(doc, "resourceSpans", "", &at)?.iter().enumerate() {
        let path = format!("resourceSpans.{r}");
        for (s, ss) in array(rs, "scopeSpans", &path, &at)?.iter().enumerate() {
            let path = format!("{path}.scopeSpans.{s}");
            for (k, sp) in array(ss, "spans", &path, &at)?.iter().enumerate() {
                out.push(span(sp, &format!("{path}.spans.{k}"), &at)?);
            }
        }
    }
    Ok(())
}

fn array<'v>(v: &'v Value, key: &str, path: &str, at: &At) -> Result<&'v [Value], TraceError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => {
            let field = match path.is_empty() {
                true => key.to_string(),
                false => format!("{path}.{key}"),
            };
            Err(at.err(
                at.line,
                &field,
                format!("expected an array (got {})", kind(other)),
            ))
        }
    }
}

fn span(v: &Value, path: &str, at: &At) -> Result<Span, TraceError> {
    let Some(obj) = v.as_object() else {
        return Err(at.err(
            at.line,
            path,
            format!("expected a span object (got {})", kind(v)),
        ));
    };
    let line = at.line_of(obj.get("spanId").and_then(Value::as_str));
    let field = |k: &str| format!("{path}.{k}");
    let id = |k: &str, required: bool| -> Result<Option<String>, TraceError> {
        match obj.get(k) {
            Some(Value::String(s)) if s.is_empty() && !required => Ok(None),
            Some(Value::String(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(Some(s.to_ascii_lowercase()))
            }
            None | Some(Value::Null) if !required => Ok(None),
            None => Err(at.err(
                line,
                &field(k),
                "missing; every span needs its traceId and spanId in hex",
            )),
            Some(other) => Err(at.err(
                line,
                &field(k),
                format!("expected a hex string (got {})", short(other)),
            )),
        }
    };
    let time = |k: &str| -> Result<u64, TraceError> {
        match obj.get(k) {
            Some(Value::String(s)) if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() => s
                .parse()
                .map_err(|_| at.err(line, &field(k), format!("{s} is too large for nanoseconds"))),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or(0)),
            None => Err(at.err(
                line,
                &field(k),
                "missing; a span needs its start and end time",
            )),
            Some(other) => Err(at.err(
                line,
                &field(k),
                format!(
                    "expected unix nanoseconds as a string of digits (got {})",
                    short(other)
                ),
            )),
        }
    };
    let start_ns = time("startTimeUnixNano")?;
    let end_ns = time("endTimeUnixNano")?;
    if end_ns < start_ns {
        return Err(at.err(line, &field("endTimeUnixNano"), "ends before it starts"));
    }
    Ok(Span {
        trace: id("traceId", true)?.unwrap_or_default(),
        id: id("spanId", true)?.unwrap_or_default(),
        parent: id("parentSpanId", false)?,
        name: obj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        start_ns,
        end_ns,
        attrs: attributes(obj, &field("attributes"), line, at)?,
    })
}

fn attributes(
    obj: &Map<String, Value>,
    path: &str,
    line: usize,
    at: &At,
) -> Result<BTreeMap<String, Value>, TraceError> {
    let mut out = BTreeMap::new();
    let list = match obj.get("attributes") {
        None | Some(Value::Null) => return Ok(out),
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(at.err(
                line,
                path,
                format!("expected an array of {{key, value}} (got {})", kind(other)),
            ))
        }
    };
    for (i, kv) in list.iter().enumerate() {
        let Some(key) = kv.get("key").and_then(Value::as_str) else {
            return Err(at.err(
                line,
                &format!("{path}.{i}.key"),
                "missing: an attribute needs a key",
            ));
        };
        let value = kv.get("value").map(any_value).unwrap_or(Value::Null);
        out.insert(key.to_string(), value);
    }
    Ok(out)
}

/// An OTLP `AnyValue` as plain JSON.
fn any_value(v: &Value) -> Value {
    let Some(o) = v.as_object() else {
        return v.clone();
    };
    if let Some(s) = o.get("stringValue") {
        return s.clone();
    }
    if let Some(i) = o.get("intValue") {
        return match i {
            Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(i.clone()),
            other => other.clone(),
        };
    }
    if let Some(x) = o
        .get("doubleValue")
        .or(o.get("boolValue"))
        .or(o.get("bytesValue"))
    {
        return x.clone();
    }
    if let Some(a) = o.get("arrayValue") {
        let vals = a.get("values").and_then(Value::as_array);
        return Value::Array(vals.map_or(Vec::new(), |v| v.iter().map(any_value).collect()));
    }
    if let Some(kv) = o.get("kvlistValue") {
        let mut m = Map::new();
        for e in kv
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = e.get("key").and_then(Value::as_str) {
                m.insert(
                    k.into(),
                    e.get("value").map(any_value).unwrap_or(Value::Null),
                );
            }
        }
        return Value::Object(m);
    }
    Value::Null
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.len() > 40 {
        true => format!(
            "{}…",
            &s[..s.char_indices().nth(40).map_or(s.len(), |(i, _)| i)]
        ),
        false => s,
    }
}
