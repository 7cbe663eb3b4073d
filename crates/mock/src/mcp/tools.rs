//! What a tool answers, as a function of its arguments: an echo of them, a key-value
//! store per caller (`put` then `get`), a fixed payload of a given size (the same bytes
//! for the same arguments, so a truncated copy is told from the whole), or a fixed text.
//! Arguments that miss what the tool's schema requires get a tool error, as MCP asks of
//! input errors. When and whether a call fails on purpose is `call.rs`'s business.

use crate::spec::mcp::{ResultKind, ToolSpec};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;

const SHARDS: usize = 16;

/// The arguments as one string, the same for the same arguments however they were
/// written (keys sorted: serde_json's maps are ordered).
pub fn canonical(args: &Map<String, Value>) -> String {
    serde_json::to_string(args).unwrap_or_default()
}

/// The same, from the arguments' JSON text as a model wrote them (`None`: not an object).
pub fn canonical_text(text: &str) -> Option<String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Some(canonical(&m)),
        _ => None,
    }
}

/// Values stored by `kv_put`, by scope (the caller: an agent session, else an MCP
/// session, else everyone) and key.
#[derive(Default)]
pub struct Kv {
    shards: Vec<Mutex<HashMap<(String, String), String>>>,
}

impl Kv {
    pub fn new() -> Kv {
        Kv {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, scope: &str, key: &str) -> &Mutex<HashMap<(String, String), String>> {
        let h = crate::hash::fnv1a(crate::hash::fnv1a(0, scope.as_bytes()), key.as_bytes());
        &self.shards[h as usize % SHARDS]
    }

    pub fn put(&self, scope: &str, key: &str, value: String) {
        let mut m = self
            .shard(scope, key)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        m.insert((scope.to_string(), key.to_string()), value);
    }

    pub fn get(&self, scope: &str, key: &str) -> Option<String> {
        let m = self
            .shard(scope, key)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        m.get(&(scope.to_string(), key.to_string())).cloned()
    }
}

/// A tool's answer: its text, or a tool error and its kind.
pub type Answer = Result<String, (String, &'static str)>;

/// A JSON value as text: a string as itself, anything else as JSON.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What `tool` answers to `args`, for a caller whose store is `scope`.
pub fn answer(tool: &ToolSpec, args: &Map<String, Value>, scope: &str, kv: &Kv) -> Answer {
    if let Some(missing) = missing_required(&tool.input_schema, args) {
        return Err((
            format!(
                "invalid arguments for {}: {missing:?} is required",
                tool.name
            ),
            "invalid_arguments",
        ));
    }
    let arg = |k: &str| args.get(k).map(text_of).unwrap_or_default();
    match &tool.result {
        ResultKind::Echo => Ok(canonical(args)),
        ResultKind::KvPut => {
            let key = arg("key");
            kv.put(scope, &key, arg("value"));
            Ok(format!("stored {key}"))
        }
        ResultKind::KvGet => {
            let key = arg("key");
            kv.get(scope, &key)
                .ok_or_else(|| (format!("no value stored under {key:?}"), "not_found"))
        }
        ResultKind::Payload(n) => Ok(payload(*n, &canonical(args))),
        ResultKind::Text(t) => Ok(t.clone()),
    }
}

/// The first key the schema's `required` names that the arguments lack.
fn missing_required(schema: &Value, args: &Map<String, Value>) -> Option<String> {
    schema
        .get("required")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|k| !args.contains_key(*k))
        .map(str::to_string)
}

/// `n` bytes of printable ASCII that depend on the arguments: the same call gets the
/// same bytes, and any cut of them is not the whole.
pub fn payload(n: usize, canonical_args: &str) -> String {
    let h = crate::hash::fnv1a(11, canonical_args.as_bytes());
    let unit = format!("plimsoll-payload-{h:016x}-");
    let mut out = String::with_capacity(n + unit.len() + 8);
    let mut i = 0u64;
    while out.len() < n {
        out.push_str(&unit);
        out.push_str(&format!("{i:06}|"));
        i += 1;
    }
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(result: ResultKind) -> ToolSpec {
        let raw = json!({"type": "object"});
        ToolSpec {
            name: "t".into(),
            description: String::new(),
            input_schema: match result {
                ResultKind::KvGet => json!({"required": ["key"]}),
                _ => raw,
            },
            result,
            latency_ms: 0.0,
            sigma: None,
            rpc_error: 0.0,
            tool_error: 0.0,
            fail: vec![],
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn results_are_functions_of_the_arguments() {
        let kv = Kv::new();
        let put = tool(ResultKind::KvPut);
        let get = tool(ResultKind::KvGet);
        let a = args(json!({"key": "k1", "value": "psn0123456789abcdef"}));
        assert_eq!(answer(&put, &a, "s1", &kv), Ok("stored k1".into()));
        let k = args(json!({"key": "k1"}));
        assert_eq!(
            answer(&get, &k, "s1", &kv),
            Ok("psn0123456789abcdef".into())
        );
        assert_eq!(
            answer(&get, &k, "s2", &kv).unwrap_err().1,
            "not_found",
            "stores are per caller"
        );
        assert_eq!(
            answer(&get, &args(json!({})), "s1", &kv).unwrap_err().1,
            "invalid_arguments"
        );
        let echo = answer(
            &tool(ResultKind::Echo),
            &args(json!({"b": 1, "a": "x"})),
            "s",
            &kv,
        );
        assert_eq!(echo, Ok(r#"{"a":"x","b":1}"#.into()));
        let p = answer(&tool(ResultKind::Payload(1000)), &k, "s", &kv).unwrap();
        assert_eq!(p.len(), 1000);
        assert_eq!(p, payload(1000, &canonical(&k)));
        assert_ne!(p, payload(1000, "{}"));
    }

    #[test]
    fn canonical_arguments_ignore_key_order_and_spacing() {
        assert_eq!(
            canonical_text(r#"{ "b": 1, "a": "x" }"#).as_deref(),
            Some(r#"{"a":"x","b":1}"#)
        );
        assert_eq!(canonical_text("[1]"), None);
    }
}
