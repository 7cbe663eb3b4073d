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

/// Keys a harness's own RESULT line must carry; Plimsoll adds the rest.
pub const HARNESS_REQUIRED: &[&str] = &[
    "concurrency",
    "sessions_ok",
    "sessions_failed",
    "turns",
    "wall_ms",
];

/// Checks a RESULT line printed by a user's harness: the keys it must carry, the type
/// of every key it gives, and no key the schema does not know (a typo would otherwise
/// be silently dropped).
pub fn check_harness_line(v: &Value) -> Result<(), String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("the bundled schema is valid JSON");
    let obj = v
        .as_object()
        .ok_or("the RESULT line must hold a JSON object")?;
    let props = schema["properties"]
        .as_object()
        .expect("the schema has properties");
    for key in HARNESS_REQUIRED {
        if !obj.contains_key(*key) {
            return Err(format!(
                "{key}: is missing; a harness RESULT needs at least {}",
                HARNESS_REQUIRED.join(", ")
            ));
        }
    }
    for (key, val) in obj {
        let Some(p) = props.get(key) else {
            return Err(format!(
                "{key}: is not a RESULT key (see schemas/result.v1.json for the names)"
            ));
        };
        if key == "harness" {
            continue; // Plimsoll fills its own harness figures
        }
        if let Some(ty) = p.get("type") {
            if !type_ok(val, ty) {
                return Err(format!("{key}: must be of type {ty}, got {val}"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn harness_lines_name_the_bad_key() {
        let ok = json!({"concurrency": 4, "sessions_ok": 4, "sessions_failed": 0, "turns": 12, "wall_ms": 10.5, "p50_session_ms": null});
        assert!(check_harness_line(&ok).is_ok());
        let mut bad = ok.clone();
        bad["sessions_ok"] = json!("four");
        assert_eq!(
            check_harness_line(&bad).unwrap_err(),
            "sessions_ok: must be of type \"integer\", got \"four\""
        );
        let mut typo = ok.clone();
        typo["p50_sesion_ms"] = json!(3);
        assert!(check_harness_line(&typo)
            .unwrap_err()
            .starts_with("p50_sesion_ms: is not a RESULT key"));
        assert!(check_harness_line(&json!({"concurrency": 1}))
            .unwrap_err()
            .starts_with("sessions_ok: is missing"));
    }

    #[test]
    fn full_results_are_checked_with_enums() {
        let v = json!({"schema_version": 1, "outcome": "sunk"});
        assert!(check(&v).unwrap_err().contains("is missing"));
    }
}
