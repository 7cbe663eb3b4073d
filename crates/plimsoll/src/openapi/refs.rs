//! A schema's `$ref`s followed through the document and its `allOf` merged: what the
//! operation list and the body's fields both read.

use serde_json::Value;

/// Follows `$ref`s (and merges `allOf`) until a schema with content; `Null` past 16 hops.
pub(crate) fn resolve(raw: &Value, s: &Value, depth: usize) -> Value {
    if depth > 16 {
        return Value::Null;
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let target = r
            .strip_prefix('#')
            .and_then(|p| raw.pointer(p))
            .cloned()
            .unwrap_or(Value::Null);
        return resolve(raw, &target, depth + 1);
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        let mut merged = serde_json::Map::new();
        let mut required = Vec::new();
        for part in all {
            let p = resolve(raw, part, depth + 1);
            if let Some(props) = p.get("properties").and_then(Value::as_object) {
                merged.extend(props.clone());
            }
            if let Some(r) = p.get("required").and_then(Value::as_array) {
                required.extend(r.clone());
            }
        }
        return serde_json::json!({"type": "object", "properties": merged, "required": required});
    }
    s.clone()
}
