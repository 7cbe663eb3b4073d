//! The admin endpoints: failure rates and pushback limits read and changed live
//! (`/plimsoll/admin/failures`, `/plimsoll/admin/limits`). A change names a model (or
//! `*`), keeps the fields it leaves out, and is validated as the scenario's own would be;
//! errors come in OpenAI's envelope.

use crate::failures::rates::Failures;
use crate::pushback::limits::Limits;
use crate::serve::app::App;
use crate::serve::errors::error_response;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;
use wire::{Api, WireError};

fn admin_bad(m: String) -> Response {
    error_response(
        Api::ChatCompletions,
        &WireError::invalid("body", m),
        "req_admin",
    )
}

/// An admin change's body: the model it names (`*`, every model or the provider, when
/// none) and its other fields; or what is wrong with it, with `example` to copy.
fn admin_change(
    body: &[u8],
    example: &str,
) -> Result<(String, serde_json::Map<String, Value>), String> {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(body) else {
        return Err(format!("must be a JSON object such as {example}"));
    };
    match fields.remove("model") {
        Some(Value::String(m)) => Ok((m, fields)),
        None => Ok(("*".to_string(), fields)),
        Some(_) => Err("model must be a string (a model name or \"*\")".into()),
    }
}

pub async fn get_failures(State(app): State<Arc<App>>) -> Json<Value> {
    let o = app
        .failure_overrides
        .read()
        .unwrap_or_else(|p| p.into_inner());
    Json(json!({"overrides": *o}))
}

/// `{"model": "*", "rate_limit": 0.5, …}` sets rates for a model (or all); fields not
/// given keep their current value. `{"model": "*", "reset": true}` drops the override.
pub async fn set_failures(State(app): State<Arc<App>>, body: axum::body::Bytes) -> Response {
    let (model, mut fields) = match admin_change(&body, r#"{"model": "*", "rate_limit": 0.2}"#) {
        Ok(x) => x,
        Err(m) => return admin_bad(m),
    };
    let mut o = app
        .failure_overrides
        .write()
        .unwrap_or_else(|p| p.into_inner());
    if fields.remove("reset") == Some(Value::Bool(true)) {
        o.remove(&model);
        return Json(json!({"overrides": *o})).into_response();
    }
    let current = o
        .get(&model)
        .or_else(|| o.get("*"))
        .copied()
        .unwrap_or_else(|| {
            app.scenario
                .model(&model)
                .map(|s| s.failures)
                .unwrap_or(app.scenario.defaults.failures)
        });
    let mut merged = serde_json::to_value(current).expect("Failures serializes");
    for (k, v) in fields {
        merged[k] = v;
    }
    let next: Failures = match serde_json::from_value(merged) {
        Ok(f) => f,
        Err(e) => return admin_bad(format!("{e}")),
    };
    if let Err(e) = next.validate() {
        return admin_bad(e);
    }
    o.insert(model, next);
    Json(json!({"overrides": *o})).into_response()
}

pub async fn get_limits(State(app): State<Arc<App>>) -> Json<Value> {
    Json(json!({
        "provider": app.scenario.provider,
        "overrides": app.pushback.overrides(),
    }))
}

/// `{"model": "*", "quota": {"rpm": 60}, "capacity": {"max_in_flight": 4}}` replaces the
/// limits of the provider (`*`, the default) or of one model, live; a field left out
/// keeps its current value, `null` removes it; `{"model": "*", "reset": true}` goes back
/// to the scenario's.
pub async fn set_limits(State(app): State<Arc<App>>, body: axum::body::Bytes) -> Response {
    let (scope, mut fields) = match admin_change(&body, r#"{"model": "*", "quota": {"rpm": 60}}"#) {
        Ok(x) => x,
        Err(m) => return admin_bad(m),
    };
    if fields.remove("reset") == Some(Value::Bool(true)) {
        let o = app.pushback.set(&scope, None);
        return Json(json!({"overrides": o})).into_response();
    }
    let current = app.limits_in_force(&scope);
    let mut merged = serde_json::to_value(current).expect("Limits serializes");
    for (k, v) in fields {
        if v.is_null() {
            if let Some(m) = merged.as_object_mut() {
                m.remove(&k);
            }
        } else {
            merged[k] = v;
        }
    }
    let next: Limits = match serde_json::from_value(merged) {
        Ok(l) => l,
        Err(e) => return admin_bad(format!("{e}")),
    };
    if let Err(e) = next.validate() {
        return admin_bad(e);
    }
    let o = app.pushback.set(&scope, Some(next));
    Json(json!({"overrides": o})).into_response()
}
