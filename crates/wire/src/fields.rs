//! Typed field access over a request's JSON, shared by every API's parser: each reader
//! names the exact field (`messages.3.content`) when something is missing or wrong.

use crate::error::WireError;
use serde_json::{Map, Value};

pub type Obj = Map<String, Value>;

pub fn parse_root(body: &[u8]) -> Result<Obj, WireError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        WireError::invalid(
            "body",
            format!(
                "is not valid JSON ({e}); send a JSON object with Content-Type: application/json"
            ),
        )
    })?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(WireError::invalid(
            "body",
            format!("must be a JSON object, got {}", type_name(&other)),
        )),
    }
}

pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub fn join(path: &str, key: impl std::fmt::Display) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn wrong(path: &str, want: &str, got: &Value) -> WireError {
    WireError::invalid(path, format!("must be {want}, got {}", type_name(got)))
}

/// A field that is absent or `null` reads as `None`.
fn present<'a>(obj: &'a Obj, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

pub fn req_str<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<&'a str, WireError> {
    let p = join(path, key);
    match present(obj, key) {
        None => Err(WireError::invalid(p, "is required")),
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(wrong(&p, "a string", v)),
    }
}

pub fn opt_str<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<Option<&'a str>, WireError> {
    match present(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong(&join(path, key), "a string", v)),
    }
}

pub fn opt_bool(obj: &Obj, key: &str, path: &str) -> Result<Option<bool>, WireError> {
    match present(obj, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(wrong(&join(path, key), "a boolean", v)),
    }
}

pub fn opt_u32(obj: &Obj, key: &str, path: &str) -> Result<Option<u32>, WireError> {
    match present(obj, key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= u32::MAX as u64 => Ok(Some(n as u32)),
            _ => Err(WireError::invalid(
                join(path, key),
                format!("must be a positive integer, got {v}"),
            )),
        },
    }
}

pub fn opt_obj<'a>(obj: &'a Obj, key: &str, path: &str) -> Result<Option<&'a Obj>, WireError> {
    match present(obj, key) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(wrong(&join(path, key), "an object", v)),
    }
}

pub fn opt_array<'a>(
    obj: &'a Obj,
    key: &str,
    path: &str,
) -> Result<Option<&'a Vec<Value>>, WireError> {
    match present(obj, key) {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(wrong(&join(path, key), "an array", v)),
    }
}

/// A required array that must hold at least one element (`messages`, `contents`);
/// `what` names one in the error ("message").
pub fn non_empty_array<'a>(
    obj: &'a Obj,
    key: &str,
    what: &str,
) -> Result<&'a Vec<Value>, WireError> {
    match obj.get(key) {
        None | Some(Value::Null) => Err(WireError::invalid(key, "is required")),
        Some(Value::Array(a)) if a.is_empty() => Err(WireError::invalid(
            key,
            format!("must contain at least one {what}"),
        )),
        Some(Value::Array(a)) => Ok(a),
        Some(v) => Err(WireError::invalid(
            key,
            format!("must be an array, got {}", type_name(v)),
        )),
    }
}

pub fn as_obj<'a>(v: &'a Value, path: &str) -> Result<&'a Obj, WireError> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(wrong(path, "an object", other)),
    }
}

/// Text of a `content` that is a string or an array of blocks with a `text` field
/// (blocks of other kinds, such as images, are skipped). Returns `""` for null.
pub fn content_text(
    v: Option<&Value>,
    path: &str,
    text_types: &[&str],
) -> Result<String, WireError> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(blocks)) => {
            let mut out = Vec::new();
            for (i, b) in blocks.iter().enumerate() {
                let bp = join(path, i);
                let b = as_obj(b, &bp)?;
                let ty = req_str(b, "type", &bp)?;
                if text_types.contains(&ty) {
                    out.push(req_str(b, "text", &bp)?.to_string());
                }
            }
            Ok(out.join("\n"))
        }
        Some(other) => Err(wrong(path, "a string or an array of content blocks", other)),
    }
}

/// Validates that `stream` is a boolean and returns it (default false).
pub fn stream_flag(root: &Obj) -> Result<bool, WireError> {
    Ok(opt_bool(root, "stream", "")?.unwrap_or(false))
}

pub fn model(root: &Obj) -> Result<String, WireError> {
    let m = req_str(root, "model", "")?;
    if m.is_empty() {
        return Err(WireError::invalid("model", "must not be empty"));
    }
    Ok(m.to_string())
}

/// A tool's JSON Schema must be an object when given; absent means "no arguments".
pub fn schema(obj: &Obj, key: &str, path: &str) -> Result<Value, WireError> {
    Ok(opt_obj(obj, key, path)?
        .map(|m| Value::Object(m.clone()))
        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}})))
}

pub fn non_empty_name(obj: &Obj, path: &str) -> Result<String, WireError> {
    let name = req_str(obj, "name", path)?;
    if name.is_empty() {
        return Err(WireError::invalid(join(path, "name"), "must not be empty"));
    }
    Ok(name.to_string())
}
