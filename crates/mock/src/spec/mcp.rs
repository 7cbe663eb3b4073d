//! The scenario's `[mcp]` section: the tools the mock serves over the Model Context
//! Protocol, each with what it answers, how long it takes and how it fails. Read once,
//! validated, every mistake an error naming the line and the fix.
//!
//! ```toml
//! [mcp]
//! reply = "json"             # or "sse": every answer as an SSE response stream
//! server_name = "plimsoll-mcp"
//! [[mcp.tools]]
//! name = "kv_put"            # a tool the agent lists and calls
//! description = "Store a value under a key"
//! result = "kv_put"          # echo | kv_put | kv_get | payload | text (see tools.rs)
//! input_schema = { type = "object", properties = { key = { type = "string" }, value = { type = "string" } }, required = ["key", "value"] }
//! latency_ms = 20            # the median time the tool takes …
//! latency_p99_ms = 2000      # … and its p99 (a lognormal tail); without it: fixed
//! failures = { rpc_error = 0.01, tool_error = 0.02 }   # seeded draws per call
//! [[mcp.tools.fail]]
//! first = 2                  # the first 2 calls of this tool fail …  (or every = M,
//! with = "tool_error"        # … with an isError result, or "rpc_error"  or attempts = N)
//! ```
//!
//! `payload_bytes = N` sizes a `payload` tool's answer; `text = "…"` is a `text` tool's.
//! Without `input_schema`, a tool's schema is its result kind's (kv_put: key and value;
//! kv_get: key; others: any object).

use serde::Deserialize;
use serde_json::{json, Value};
use std::ops::Range;
use toml::Spanned;

/// How the server sends a request's answer over Streamable HTTP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplyForm {
    /// `application/json`: one JSON-RPC response as the body.
    #[default]
    Json,
    /// `text/event-stream`: the response as one event of a stream opened at once.
    Sse,
}

/// What a tool answers, as a function of its arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultKind {
    /// The arguments, as JSON.
    Echo,
    /// Stores `value` under `key` in the caller's store; answers `stored KEY`.
    KvPut,
    /// The value stored under `key` (an isError result when there is none).
    KvGet,
    /// A fixed payload of this many bytes, the same for the same arguments.
    Payload(usize),
    /// This text.
    Text(String),
}

/// How an injected failure shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailWith {
    /// A JSON-RPC error (-32603): the protocol failed.
    RpcError,
    /// A result with `isError: true`: the tool failed, and the model is told.
    ToolError,
}

impl FailWith {
    pub fn name(self) -> &'static str {
        match self {
            FailWith::RpcError => "rpc_error",
            FailWith::ToolError => "tool_error",
        }
    }
}

/// When a scripted failure happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// The first N calls of the tool.
    First(u64),
    /// Every Mth call of the tool.
    Every(u64),
    /// The first N attempts of each call (the same arguments sent again).
    Attempts(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailRule {
    pub when: When,
    pub with: FailWith,
}

/// One tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub result: ResultKind,
    /// Median latency; with `sigma`, lognormal around it.
    pub latency_ms: f64,
    pub sigma: Option<f64>,
    pub rpc_error: f64,
    pub tool_error: f64,
    pub fail: Vec<FailRule>,
}

/// The whole `[mcp]` section (no tools when absent).
#[derive(Clone, Debug, PartialEq)]
pub struct McpSpec {
    pub reply: ReplyForm,
    pub server_name: String,
    pub instructions: Option<String>,
    pub tools: Vec<ToolSpec>,
}

impl Default for McpSpec {
    fn default() -> Self {
        McpSpec {
            reply: ReplyForm::Json,
            server_name: "plimsoll-mcp".into(),
            instructions: None,
            tools: Vec::new(),
        }
    }
}

impl McpSpec {
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// `[mcp]` as written.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMcp {
    /// How answers are sent over Streamable HTTP: "json" (one JSON-RPC response body, the
    /// default) or "sse" (an SSE response stream).
    reply: Option<String>,
    /// Server name reported in the initialize result. Default "plimsoll-mcp".
    server_name: Option<String>,
    /// Instructions text the server returns in its initialize result. Default: none.
    instructions: Option<String>,
    /// The tools served, [[mcp.tools]], each with a unique name.
    #[serde(default)]
    #[schemars(with = "Vec<RawTool>")]
    tools: Vec<Spanned<RawTool>>,
}

/// One MCP tool, [[mcp.tools]]: what it answers, how long it takes and how it fails.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawTool {
    /// The tool's name, unique: 1 to 128 of A-Z a-z 0-9 _ - . Required.
    name: String,
    /// Description the tool is listed with. Default: one from its result kind, e.g. "Stores
    /// a value under a key".
    description: Option<String>,
    /// JSON Schema of the arguments, as a table. Default: its result kind's (kv_put: key
    /// and value; kv_get: key; others: any object).
    #[schemars(with = "Option<serde_json::Value>")]
    input_schema: Option<toml::Value>,
    /// What the tool answers: "echo" (its arguments, the default), "kv_put", "kv_get",
    /// "payload" (payload_bytes bytes) or "text" (the `text`).
    result: Option<String>,
    /// Size in bytes (1 to 67108864) of a payload tool's answer, the same for the same
    /// arguments. Required with, and only for, result = "payload".
    payload_bytes: Option<i64>,
    /// The fixed answer of a text tool. Required with, and only for, result = "text".
    text: Option<String>,
    /// The tool's median time per call, in ms (0 to 3600000). Default 0.
    latency_ms: Option<f64>,
    /// The tool's p99 time in ms (≥ latency_ms > 0), giving a lognormal tail. Unset: every
    /// call takes latency_ms.
    latency_p99_ms: Option<f64>,
    /// Seeded per-call failure rates of this tool; none by default.
    failures: Option<RawRates>,
    /// Failure rules, [[mcp.tools.fail]]: calls that fail by rule, the same way every run.
    #[serde(default)]
    fail: Vec<RawFail>,
}

/// Seeded per-call failure rates of an MCP tool (shares 0..1 adding up to at most 1).
#[derive(Deserialize, schemars::JsonSchema, Default)]
#[serde(deny_unknown_fields, default)]
struct RawRates {
    /// Share (0..1) of calls answered with a JSON-RPC error (-32603): the protocol fails.
    /// Default 0.
    rpc_error: f64,
    /// Share (0..1) of calls answered with an isError result: the tool fails and the model
    /// is told. Default 0.
    tool_error: f64,
}

/// An MCP tool's failure rule: exactly one of first, every or attempts, and `with`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawFail {
    /// Fail the tool's first N calls (≥ 1).
    first: Option<u64>,
    /// Fail every Mth call of the tool (≥ 1).
    every: Option<u64>,
    /// Fail the first N attempts (≥ 1) of each call, an attempt being the same arguments
    /// sent again.
    attempts: Option<u64>,
    /// How the call fails: "rpc_error" (a JSON-RPC error) or "tool_error" (an isError
    /// result).
    with: String,
}

/// A mistake in `[mcp]`: where (a tool's span, or the section's) and what to write.
pub(crate) type SpecError = (Option<Range<usize>>, String);

impl RawMcp {
    pub(crate) fn check(&self) -> Result<McpSpec, SpecError> {
        let reply = match self.reply.as_deref() {
            None | Some("json") => ReplyForm::Json,
            Some("sse") => ReplyForm::Sse,
            Some(o) => {
                return Err((
                    None,
                    format!("mcp.reply must be \"json\" or \"sse\" (got {o:?})"),
                ))
            }
        };
        let mut tools: Vec<ToolSpec> = Vec::new();
        for (i, t) in self.tools.iter().enumerate() {
            let at = |m: String| {
                (
                    Some(t.span()),
                    format!("mcp.tools[{i}] ({:?}): {m}", t.get_ref().name),
                )
            };
            let spec = t.get_ref().check().map_err(at)?;
            if tools.iter().any(|o| o.name == spec.name) {
                return Err(at(
                    "a tool of that name is declared twice; names are unique".into(),
                ));
            }
            tools.push(spec);
        }
        Ok(McpSpec {
            reply,
            server_name: self
                .server_name
                .clone()
                .unwrap_or_else(|| "plimsoll-mcp".into()),
            instructions: self.instructions.clone(),
            tools,
        })
    }
}

impl RawTool {
    fn check(&self) -> Result<ToolSpec, String> {
        let name_ok = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
        if self.name.is_empty() || self.name.len() > 128 || !self.name.chars().all(name_ok) {
            return Err("name: 1 to 128 of A-Z a-z 0-9 _ - . (MCP's tool names)".into());
        }
        let result = self.result_kind()?;
        let input_schema = match &self.input_schema {
            Some(s) => {
                let v = serde_json::to_value(s).map_err(|e| format!("input_schema: {e}"))?;
                if !v.is_object() {
                    return Err("input_schema must be a table (a JSON Schema object)".into());
                }
                v
            }
            None => default_schema(&result),
        };
        let (latency_ms, sigma) = self.latency()?;
        let r = self
            .failures
            .as_ref()
            .map_or((0.0, 0.0), |f| (f.rpc_error, f.tool_error));
        let rate_ok = |x: f64| (0.0..=1.0).contains(&x);
        if !rate_ok(r.0) || !rate_ok(r.1) || r.0 + r.1 > 1.0 {
            return Err(format!(
                "failures: rpc_error and tool_error are rates from 0 to 1 that add up to at most 1 (got {} and {})",
                r.0, r.1
            ));
        }
        let fail = self
            .fail
            .iter()
            .map(RawFail::check)
            .collect::<Result<_, _>>()?;
        Ok(ToolSpec {
            name: self.name.clone(),
            description: self
                .description
                .clone()
                .unwrap_or_else(|| describe(&result)),
            input_schema,
            result,
            latency_ms,
            sigma,
            rpc_error: r.0,
            tool_error: r.1,
            fail,
        })
    }

    fn result_kind(&self) -> Result<ResultKind, String> {
        let kind = match self.result.as_deref().unwrap_or("echo") {
            "echo" => ResultKind::Echo,
            "kv_put" => ResultKind::KvPut,
            "kv_get" => ResultKind::KvGet,
            "payload" => match self.payload_bytes {
                Some(n) if (1..=64 << 20).contains(&n) => ResultKind::Payload(n as usize),
                other => {
                    return Err(format!(
                    "result = \"payload\" needs payload_bytes from 1 to 67108864 (got {other:?})"
                ))
                }
            },
            "text" => match &self.text {
                Some(t) => ResultKind::Text(t.clone()),
                None => return Err("result = \"text\" needs text = \"…\"".into()),
            },
            o => {
                return Err(format!(
                    "result = {o:?}: use echo, kv_put, kv_get, payload or text"
                ))
            }
        };
        if self.payload_bytes.is_some() && !matches!(kind, ResultKind::Payload(_)) {
            return Err("payload_bytes belongs to result = \"payload\"".into());
        }
        if self.text.is_some() && !matches!(kind, ResultKind::Text(_)) {
            return Err("text belongs to result = \"text\"".into());
        }
        Ok(kind)
    }

    /// The median and, with a p99, the lognormal sigma that puts it there.
    fn latency(&self) -> Result<(f64, Option<f64>), String> {
        let m = self.latency_ms.unwrap_or(0.0);
        if !(0.0..=3_600_000.0).contains(&m) {
            return Err(format!(
                "latency_ms must be between 0 and 3600000 (got {m})"
            ));
        }
        match self.latency_p99_ms {
            None => Ok((m, None)),
            Some(p) if m > 0.0 && p >= m && p <= 3_600_000.0 => {
                // p99 of exp(N(ln m, σ)) is m·e^(2.3263 σ).
                Ok((m, (p > m).then(|| (p / m).ln() / 2.326_347_874)))
            }
            Some(p) => Err(format!(
                "latency_p99_ms must be at least latency_ms (> 0) and at most 3600000 (got {p} with latency_ms {m})"
            )),
        }
    }
}

impl RawFail {
    fn check(&self) -> Result<FailRule, String> {
        let when = match (self.first, self.every, self.attempts) {
            (Some(n), None, None) if n >= 1 => When::First(n),
            (None, Some(m), None) if m >= 1 => When::Every(m),
            (None, None, Some(n)) if n >= 1 => When::Attempts(n),
            (Some(_), None, None) | (None, Some(_), None) | (None, None, Some(_)) => {
                return Err("fail: first, every and attempts count from 1".into())
            }
            _ => return Err(
                "fail: each rule needs exactly one of first = N (the tool's first N calls), every = M (every Mth call) or attempts = N (the first N attempts of each call)".into(),
            ),
        };
        let with = match self.with.as_str() {
            "rpc_error" => FailWith::RpcError,
            "tool_error" => FailWith::ToolError,
            o => return Err(format!("fail: with = {o:?}: use rpc_error (a JSON-RPC error) or tool_error (an isError result)")),
        };
        Ok(FailRule { when, with })
    }
}

fn default_schema(kind: &ResultKind) -> Value {
    let s =
        |props: Value, req: Value| json!({"type": "object", "properties": props, "required": req});
    match kind {
        ResultKind::KvPut => s(
            json!({"key": {"type": "string"}, "value": {"type": "string"}}),
            json!(["key", "value"]),
        ),
        ResultKind::KvGet => s(json!({"key": {"type": "string"}}), json!(["key"])),
        _ => json!({"type": "object"}),
    }
}

fn describe(kind: &ResultKind) -> String {
    match kind {
        ResultKind::Echo => "Answers with its arguments".into(),
        ResultKind::KvPut => "Stores a value under a key".into(),
        ResultKind::KvGet => "Reads the value stored under a key".into(),
        ResultKind::Payload(n) => format!("Answers with {n} bytes"),
        ResultKind::Text(_) => "Answers with a fixed text".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<McpSpec, String> {
        let raw: RawMcp = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.check().map_err(|(_, m)| m)
    }

    #[test]
    fn tools_are_read_with_their_defaults() {
        let s = read("reply = \"sse\"\n[[tools]]\nname = \"kv_put\"\nresult = \"kv_put\"\n[[tools]]\nname = \"slow\"\nlatency_ms = 100\nlatency_p99_ms = 2000\nfailures = { tool_error = 0.1 }\n[[tools.fail]]\nevery = 3\nwith = \"rpc_error\"\n").unwrap();
        assert_eq!(s.reply, ReplyForm::Sse);
        let put = s.tool("kv_put").unwrap();
        assert_eq!(put.input_schema["required"], json!(["key", "value"]));
        let slow = s.tool("slow").unwrap();
        assert_eq!(slow.result, ResultKind::Echo);
        let sigma = slow.sigma.unwrap();
        assert!(((100.0 * (2.326_347_874 * sigma).exp()) - 2000.0).abs() < 1e-6);
        assert_eq!(
            slow.fail,
            vec![FailRule {
                when: When::Every(3),
                with: FailWith::RpcError
            }]
        );
    }

    #[test]
    fn mistakes_say_what_to_write() {
        let e = read("[[tools]]\nname = \"a b\"\n").unwrap_err();
        assert!(e.contains("1 to 128 of"), "{e}");
        let e = read("[[tools]]\nname = \"a\"\nresult = \"payload\"\n").unwrap_err();
        assert!(e.contains("needs payload_bytes"), "{e}");
        let e = read("[[tools]]\nname = \"a\"\nlatency_ms = 10\nlatency_p99_ms = 5\n").unwrap_err();
        assert!(e.contains("at least latency_ms"), "{e}");
        let e = read(
            "[[tools]]\nname = \"a\"\n[[tools.fail]]\nfirst = 1\nevery = 2\nwith = \"rpc_error\"\n",
        )
        .unwrap_err();
        assert!(e.contains("exactly one of first"), "{e}");
        let e = read("[[tools]]\nname = \"a\"\n[[tools.fail]]\nfirst = 1\nwith = \"boom\"\n")
            .unwrap_err();
        assert!(e.contains("use rpc_error"), "{e}");
        let e = read("[[tools]]\nname = \"a\"\n[[tools]]\nname = \"a\"\n").unwrap_err();
        assert!(e.contains("declared twice"), "{e}");
        let e = read("[[tools]]\nname = \"a\"\nfailures = { rpc_error = 0.7, tool_error = 0.7 }\n")
            .unwrap_err();
        assert!(e.contains("add up to at most 1"), "{e}");
        assert!(read("[[tools]]\nname = \"a\"\nlatncy_ms = 1\n")
            .unwrap_err()
            .contains("unknown field"));
    }
}
