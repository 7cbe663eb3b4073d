//! Checking a RESULT object against `schemas/result.v1.json`: required keys, JSON
//! types and enumerations, top level and `harness`. Enough to name the bad key of a
//! malformed line; not a general JSON Schema validator.

use serde_json::Value;

pub const SCHEMA: &str = include_str!("../../../schemas/result.v1.json");

fn type_ok(v: &Value, ty: &Value) -> bool {
    let one = |t: &str| match t {
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    };
    match ty {
        Value::String(t) => one(t),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(one),
        _ => true,
    }
}

fn check_object(v: &Value, schema: &Value, at: &str) -> Result<(), String> {
    let obj = v
        .as_object()
        .ok_or_else(|| format!("{at}: must be a JSON object"))?;
    for key in schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !obj.contains_key(key) {
            return Err(format!(
                "{at}{key}: is missing (required by schemas/result.v1.json)"
            ));
        }
    }
    let props = schema["properties"].as_object();
    for (key, val) in obj {
        let Some(p) = props.and_then(|p| p.get(key)) else {
            continue;
        };
        if let Some(ty) = p.get("type") {
            if !type_ok(val, ty) {
                return Err(format!("{at}{key}: must be of type {ty}, got {val}"));
            }
        }
        if let Some(allowed) = p.get("enum").and_then(Value::as_array) {
            if !allowed.contains(val) {
                return Err(format!(
                    "{at}{key}: must be one of {}, got {val}",
                    Value::Array(allowed.clone())
                ));
            }
        }
        if p.get("type") == Some(&Value::from("object")) && p.get("required").is_some() {
            check_object(val, p, &format!("{at}{key}."))?;
        }
    }
    Ok(())
}

/// Checks one RESULT object; the error names the key and what was expected.
pub fn check(v: &Value) -> Result<(), String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the bundled schema is valid JSON");
    check_object(v, &schema, "")
}
