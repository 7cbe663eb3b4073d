//! Checking a RESULT object against `schemas/result.v1.json` with the `jsonschema`
//! crate (every keyword of the schema, nested objects included), and a harness's own
//! RESULT line against the part of it a harness gives. Errors name the key.

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use serde_json::Value;
use std::sync::OnceLock;

pub const SCHEMA: &str = include_str!("../../../schemas/result.v1.json");

fn schema() -> &'static Value {
    static S: OnceLock<Value> = OnceLock::new();
    S.get_or_init(|| serde_json::from_str(SCHEMA).expect("the bundled schema is valid JSON"))
}

fn validator() -> &'static Validator {
    static V: OnceLock<Validator> = OnceLock::new();
    V.get_or_init(|| {
        jsonschema::validator_for(schema()).expect("the bundled schema is a valid JSON Schema")
    })
}

/// `/harness/bound` → `harness.bound`.
fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// One validation error in words: the key, then what was wrong.
fn words(e: &jsonschema::ValidationError) -> String {
    let at = dotted(&e.instance_path().to_string());
    match e.kind() {
        ValidationErrorKind::Required { property } => {
            let key = property
                .as_str()
                .map_or(property.to_string(), str::to_string);
            let key = if at.is_empty() {
                key
            } else {
                format!("{at}.{key}")
            };
            format!("{key}: is missing (required by schemas/result.v1.json)")
        }
        _ if at.is_empty() => format!("the RESULT: {e}"),
        _ => format!("{at}: {e}"),
    }
}

/// Checks one RESULT object; the error names the key and what was expected.
pub fn check(v: &Value) -> Result<(), String> {
    validator().validate(v).map_err(|e| words(&e))
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
    let schema = schema();
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
        let one = jsonschema::validator_for(p).map_err(|e| format!("{key}: {e}"))?;
        one.validate(val).map_err(|e| format!("{key}: {e}"))?;
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
        let e = check_harness_line(&bad).unwrap_err();
        assert!(
            e.starts_with("sessions_ok: ") && e.contains("integer"),
            "{e}"
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
    fn full_results_are_checked_with_enums_and_nested_objects() {
        let v = json!({"schema_version": 1, "outcome": "sunk"});
        assert!(check(&v).unwrap_err().contains("is missing"));
        let ok: Value = serde_json::from_str(EXAMPLE).unwrap();
        check(&ok).unwrap();
        let mut sunk = ok.clone();
        sunk["outcome"] = json!("sunk");
        let e = check(&sunk).unwrap_err();
        assert!(e.starts_with("outcome: ") && e.contains("sunk"), "{e}");
        let mut bound = ok.clone();
        bound["harness"]["bound"] = json!("nobody");
        let e = check(&bound).unwrap_err();
        assert!(e.starts_with("harness.bound: "), "{e}");
        let mut gone = ok;
        gone["harness"].as_object_mut().unwrap().remove("cpu_share");
        assert_eq!(
            check(&gone).unwrap_err(),
            "harness.cpu_share: is missing (required by schemas/result.v1.json)"
        );
    }

    /// A real RESULT line (`plimsoll run` on the floor agent).
    #[test]
    fn the_harness_parts_are_checked_when_present() {
        let mut v: Value = serde_json::from_str(EXAMPLE).unwrap();
        let part = json!({"cpu_sec": 0.1, "ms_per_turn": 1.5});
        let names = [
            "total",
            "driver",
            "mock_serving",
            "mock_oracle",
            "mock_cache",
            "probe_sampling",
            "probe_threads",
            "orchestration",
        ];
        let parts: serde_json::Map<String, Value> = names
            .iter()
            .map(|n| (n.to_string(), part.clone()))
            .collect();
        v["harness"]["parts"] = Value::Object(parts);
        assert!(check(&v).is_ok(), "{:?}", check(&v));
        let typed: crate::StepResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(
            typed.harness.parts.unwrap().mock_oracle.ms_per_turn,
            Some(1.5)
        );
        v["harness"]["parts"]["driver"]["cpu_sec"] = json!(-1);
        assert!(check(&v)
            .unwrap_err()
            .starts_with("harness.parts.driver.cpu_sec"));
        v["harness"]["parts"]
            .as_object_mut()
            .unwrap()
            .remove("driver");
        assert!(check(&v).is_err());
    }

    const EXAMPLE: &str = r#"{"schema_version":1,"concurrency":4,"sessions_ok":4,"sessions_failed":0,"turns":12,"wall_ms":2027.67,"p50_session_ms":1973.25,"p99_session_ms":2025.47,"p50_turn_ms":645.12,"p99_turn_ms":715.78,"p50_ttft_ms":null,"p99_ttft_ms":null,"ideal_session_ms":1866.75,"latency_inflation":1.06,"peak_rss_mb":0.0,"rss_kb_per_session":0.0,"baseline_rss_mb":0.0,"peak_threads":0,"peak_fds":0,"cpu_ms_per_turn":null,"cpu_sec":0.0,"llm_calls":36,"llm_tokens_out":552,"injected_failures":0,"integrity_violations":0,"errors_by_kind":{},"files_created":0,"harness":{"mock_timing_error_p99_ms":7.04,"driver_lag_p99_ms":7.14,"cpu_share":0.01,"bound":"sut"},"outcome":"ok","turns_per_s":6.24}"#;
}
