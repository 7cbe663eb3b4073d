//! What `plimsoll bench mock --mcp` sends, as an MCP client of either era would: opening
//! a client's session (legacy: `initialize` and `notifications/initialized`, then every
//! call in its `Mcp-Session-Id`; stateless 2026-07-28: one `server/discover`, then every
//! call carrying its version in `_meta` and mirrored in the headers), the `tools/call` of
//! each tool the bench drives with its headers, and how an answer is told good. The
//! versions, header names and `_meta` keys are `wire::mcp::protocol`'s; the scenario
//! and the load are `mcp_bench`'s.

use anyhow::{bail, Context};
use bytes::Bytes;
use drive::http::Conn;
use serde::Serialize;
use serde_json::{json, Value};
use wire::mcp::protocol as p;

/// Which era of the protocol the clients speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize` handshake, a session per client (2025-11-25).
    Legacy,
    /// No session: every request names its version (2026-07-28).
    Stateless,
}

/// How the mock sends each answer (the scenario's `mcp.reply`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reply {
    Json,
    Sse,
}

/// Which tool the clients call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// `echo`: the arguments back.
    Echo,
    /// `kv_put` and `kv_get` in turn, each get checked for the value just put.
    Kv,
}

impl Era {
    pub fn parse(s: &str) -> anyhow::Result<Era> {
        match s {
            "legacy" => Ok(Era::Legacy),
            "stateless" => Ok(Era::Stateless),
            o => bail!("--era must be legacy or stateless (got {o:?})"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Stateless => "stateless",
        }
    }
    /// The protocol version the clients speak.
    pub fn version(self) -> &'static str {
        match self {
            Era::Legacy => p::LEGACY_VERSIONS[0],
            Era::Stateless => p::MODERN_VERSIONS[0],
        }
    }
}

impl Reply {
    pub fn parse(s: &str) -> anyhow::Result<Reply> {
        match s {
            "json" => Ok(Reply::Json),
            "sse" => Ok(Reply::Sse),
            o => bail!("--reply must be json or sse (got {o:?})"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Reply::Json => "json",
            Reply::Sse => "sse",
        }
    }
}

impl Tool {
    pub fn parse(s: &str) -> anyhow::Result<Tool> {
        match s {
            "echo" => Ok(Tool::Echo),
            "kv" => Ok(Tool::Kv),
            o => bail!("--tool must be echo or kv (got {o:?})"),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Tool::Echo => "echo",
            Tool::Kv => "kv",
        }
    }
}

/// The `[mcp]` section of the bench's scenario: the tools, all answering at once.
pub(crate) fn scenario(reply: Reply) -> String {
    let mut s = format!("[mcp]\nreply = \"{}\"\n", reply.name());
    for (name, result) in [("echo", "echo"), ("kv_put", "kv_put"), ("kv_get", "kv_get")] {
        s += &format!("[[mcp.tools]]\nname = \"{name}\"\nresult = \"{result}\"\nlatency_ms = 0\n");
    }
    s
}

type Headers = Vec<(String, String)>;

fn header(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// One JSON-RPC request.
fn request(id: u64, method: &str, params: Value) -> Bytes {
    Bytes::from(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
}

/// The stateless revision's `_meta` envelope.
fn meta(era: Era) -> Value {
    json!({p::META_VERSION: era.version(), p::META_CAPABILITIES: {}})
}

/// Opens one client's session on `conn`; returns the headers every call of it carries.
pub(crate) async fn open(conn: &mut Conn, era: Era) -> anyhow::Result<Headers> {
    let mut h = vec![
        header("content-type", "application/json"),
        // What the official SDKs send: the server picks (the scenario's `mcp.reply`).
        header("accept", "application/json, text/event-stream"),
        header(p::HEADER_VERSION, era.version()),
    ];
    let ignore = |_, _: &[u8]| true;
    match era {
        Era::Legacy => {
            let params = json!({"protocolVersion": era.version(), "capabilities": {},
                "clientInfo": {"name": "plimsoll-bench", "version": "1"}});
            let init = &h[..2];
            let (status, headers) = conn
                .request(
                    "POST",
                    "/mcp",
                    init,
                    request(0, "initialize", params),
                    ignore,
                )
                .await?;
            let sid = headers
                .get(p::HEADER_SESSION)
                .and_then(|v| v.to_str().ok())
                .with_context(|| format!("initialize answered {status} without a session id"))?;
            h.push(header(p::HEADER_SESSION, sid));
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let body = Bytes::from(note.to_string());
            let (status, _) = conn.request("POST", "/mcp", &h, body, ignore).await?;
            if status != 202 {
                bail!("notifications/initialized answered {status}, not 202");
            }
        }
        Era::Stateless => {
            let mut d = h.clone();
            d.push(header(p::HEADER_METHOD, "server/discover"));
            let body = request(0, "server/discover", json!({"_meta": meta(era)}));
            let (status, _) = conn.request("POST", "/mcp", &d, body, ignore).await?;
            if status != 200 {
                bail!("server/discover answered {status}");
            }
        }
    }
    Ok(h)
}

/// One `tools/call`: its headers, its body, and a text its answer must hold.
pub(crate) struct CallParts {
    pub headers: Headers,
    pub body: Bytes,
    pub expect: Option<String>,
}

/// Call `seq` of client `n`: `echo` with arguments of its own, or `kv_put` of a fresh
/// value and `kv_get` of it in turn.
pub(crate) fn call(era: Era, tool: Tool, n: usize, seq: u64, base: &Headers) -> CallParts {
    let (name, args, expect) = match tool {
        Tool::Echo => (
            "echo",
            json!({"client": n, "seq": seq, "text": "ping"}),
            None,
        ),
        Tool::Kv if seq.is_multiple_of(2) => (
            "kv_put",
            json!({"key": format!("k{n}"), "value": format!("v{n}-{seq}")}),
            None,
        ),
        Tool::Kv => (
            "kv_get",
            json!({"key": format!("k{n}")}),
            // The whole text, so a stale value with the same prefix is not taken for it.
            Some(format!("\"text\":\"v{n}-{}\"", seq - 1)),
        ),
    };
    let mut params = json!({"name": name, "arguments": args});
    let mut headers = base.clone();
    if era == Era::Stateless {
        params["_meta"] = meta(era);
        headers.push(header(p::HEADER_METHOD, "tools/call"));
        headers.push(header(p::HEADER_NAME, name));
    }
    CallParts {
        headers,
        body: request(seq + 1, "tools/call", params),
        expect,
    }
}

/// A good answer: a tool result that is not an error (as JSON or as one SSE event), with
/// the value a `kv_get` must return.
pub(crate) fn answered(body: &[u8], expect: Option<&str>) -> bool {
    let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    has(b"\"isError\":false") && expect.is_none_or(|e| has(e.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stateless_call_mirrors_its_method_and_tool_in_the_headers() {
        let c = call(Era::Stateless, Tool::Kv, 3, 1, &Vec::new());
        let body: Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(body["params"]["name"], "kv_get");
        assert_eq!(body["params"]["_meta"][p::META_VERSION], "2026-07-28");
        assert!(c.headers.contains(&header(p::HEADER_NAME, "kv_get")));
        assert_eq!(c.expect.as_deref(), Some(r#""text":"v3-0""#));
        let legacy = call(Era::Legacy, Tool::Echo, 0, 0, &Vec::new());
        assert!(legacy.headers.is_empty() && legacy.expect.is_none());
    }

    #[test]
    fn only_a_tool_result_that_is_no_error_is_good() {
        let ok = br#"data: {"result":{"content":[{"text":"v1-40"}],"isError":false}}"#;
        assert!(answered(ok, Some(r#""text":"v1-40""#)));
        assert!(!answered(ok, Some(r#""text":"v1-4""#)));
        assert!(!answered(br#"{"result":{"isError":true}}"#, None));
        assert!(!answered(br#"{"error":{"code":-32603}}"#, None));
    }
}
