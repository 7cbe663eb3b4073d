//! What MCP says inside JSON-RPC: the protocol versions of both eras (the legacy
//! `initialize` handshake, 2024-11-05 to 2025-11-25, and the stateless revision
//! 2026-07-28, whose every request carries its version in `_meta`), the reserved `_meta`
//! keys and HTTP headers, and the results a tool server answers with. Checked against the
//! specification's schema and the official SDKs (Python `mcp` 2.3.0 probes
//! `server/discover` at 2026-07-28 and falls back to `initialize`; TypeScript
//! `@modelcontextprotocol/sdk` 1.32.2 initializes at 2025-11-25).

use crate::mcp::jsonrpc::{code, RpcError};
use base64::Engine;
use serde_json::{json, Map, Value};

/// Revisions served through the stateless per-request `_meta`, newest first.
pub const MODERN_VERSIONS: &[&str] = &["2026-07-28"];
/// Revisions reached through the `initialize` handshake, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub const META: &str = "_meta";
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Streamable HTTP headers (names lower-case, as HTTP compares them).
pub const HEADER_SESSION: &str = "mcp-session-id";
pub const HEADER_VERSION: &str = "mcp-protocol-version";
pub const HEADER_METHOD: &str = "mcp-method";
pub const HEADER_NAME: &str = "mcp-name";

/// Every version served, newest first (the order `supported` lists them in).
pub fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS
        .iter()
        .chain(LEGACY_VERSIONS)
        .copied()
        .collect()
}

/// The version a legacy `initialize` agrees on: the client's when served, else the newest
/// legacy one (the client then decides whether it can speak it).
pub fn negotiate(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| LEGACY_VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

/// The protocol version a stateless request names in its `_meta`, if it names one.
pub fn meta_version(params: Option<&Map<String, Value>>) -> Option<&str> {
    params?.get(META)?.get(META_VERSION)?.as_str()
}

/// A stateless request's `_meta` envelope: the version it names, when it also carries
/// the client's capabilities (rung 1 of the official SDKs' ladder); else invalid params.
pub fn envelope(params: Option<&Map<String, Value>>) -> Result<&str, RpcError> {
    let meta = params.and_then(|p| p.get(META)).and_then(Value::as_object);
    let version = meta
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    let caps = meta.is_some_and(|m| m.get(META_CAPABILITIES).is_some_and(Value::is_object));
    match version {
        Some(v) if caps => Ok(v),
        _ => Err(RpcError::new(
            code::INVALID_PARAMS,
            format!(
                "Invalid params: params._meta must carry {META_VERSION:?} (a string) and {META_CAPABILITIES:?} (an object)"
            ),
        )),
    }
}

/// The stateless version served for `requested`, or `UnsupportedProtocolVersionError`.
pub fn served(requested: &str) -> Result<&'static str, RpcError> {
    MODERN_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .ok_or_else(|| unsupported_version(requested))
}

/// `UnsupportedProtocolVersionError`: the versions served, and the one asked for.
pub fn unsupported_version(requested: &str) -> RpcError {
    RpcError::new(
        code::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({"supported": supported_versions(), "requested": requested}))
}

/// Who the server says it is.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub instructions: Option<String>,
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": false}})
}

/// The answer to a legacy `initialize`.
pub fn initialize_result(version: &str, info: &ServerInfo) -> Value {
    let mut r = json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
        "serverInfo": {"name": info.name, "version": info.version},
    });
    if let Some(i) = &info.instructions {
        r["instructions"] = json!(i);
    }
    r
}

/// Adds what every result of the stateless revision carries: its `resultType` and the
/// server's identity in `_meta`.
pub fn modern(mut result: Value, info: &ServerInfo) -> Value {
    result["resultType"] = json!("complete");
    result[META] = json!({META_SERVER_INFO: {"name": info.name, "version": info.version}});
    result
}

/// The answer to `server/discover` (stateless revision; cacheable).
pub fn discover_result(info: &ServerInfo) -> Value {
    let mut r = json!({
        "supportedVersions": supported_versions(),
        "capabilities": capabilities(),
        "ttlMs": 0,
        "cacheScope": "public",
    });
    if let Some(i) = &info.instructions {
        r["instructions"] = json!(i);
    }
    modern(r, info)
}

/// One tool as `tools/list` lists it.
pub fn tool(name: &str, description: &str, input_schema: &Value) -> Value {
    json!({"name": name, "description": description, "inputSchema": input_schema})
}

/// The answer to `tools/list`: every tool on one page; the stateless revision's results
/// carry caching hints (fresh for `ttl_ms`).
pub fn list_result(tools: Vec<Value>, modern_info: Option<&ServerInfo>, ttl_ms: u64) -> Value {
    let r = json!({"tools": tools});
    match modern_info {
        Some(info) => {
            let mut r = modern(r, info);
            r["ttlMs"] = json!(ttl_ms);
            r["cacheScope"] = json!("public");
            r
        }
        None => r,
    }
}

/// The answer to `tools/call`: one text block; `is_error` marks a tool that failed (the
/// model sees it; the protocol did not fail).
pub fn call_result(text: &str, is_error: bool, modern_info: Option<&ServerInfo>) -> Value {
    let r = json!({"content": [{"type": "text", "text": text}], "isError": is_error});
    match modern_info {
        Some(info) => modern(r, info),
        None => r,
    }
}

/// A reply as one Server-Sent Event of a response stream.
pub fn sse_event(message: &str) -> String {
    format!("event: message\ndata: {message}\n\n")
}

/// A header value as sent, decoding the `=?base64?…?=` form of `Mcp-Name` and
/// `Mcp-Param-*`; `None` when it is not valid base64 or UTF-8.
pub fn header_value(raw: &str) -> Option<String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn versions_newest_first_and_negotiated() {
        assert_eq!(supported_versions()[0], "2026-07-28");
        assert_eq!(supported_versions()[1], "2025-11-25");
        assert_eq!(negotiate(Some("2025-03-26")), "2025-03-26");
        assert_eq!(negotiate(Some("2099-01-01")), "2025-11-25");
        assert_eq!(negotiate(None), "2025-11-25");
    }

    #[test]
    fn a_stateless_request_names_a_served_version_and_its_capabilities() {
        let ok = params(json!({"_meta": {META_VERSION: "2026-07-28", META_CAPABILITIES: {}}}));
        assert_eq!(envelope(Some(&ok)), Ok("2026-07-28"));
        assert_eq!(meta_version(Some(&ok)), Some("2026-07-28"));
        assert_eq!(served("2026-07-28"), Ok("2026-07-28"));
        let e = served("1900-01-01").unwrap_err();
        assert_eq!(e.code, code::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data.unwrap()["requested"], "1900-01-01");
        let bare = params(json!({"_meta": {META_VERSION: "2026-07-28"}}));
        assert_eq!(
            envelope(Some(&bare)).unwrap_err().code,
            code::INVALID_PARAMS
        );
        assert_eq!(envelope(None).unwrap_err().code, code::INVALID_PARAMS);
    }

    #[test]
    fn results_of_the_stateless_revision_say_complete_and_who_answered() {
        let info = ServerInfo {
            name: "m".into(),
            version: "1".into(),
            instructions: None,
        };
        let r = call_result("hi", false, Some(&info));
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["_meta"][META_SERVER_INFO]["name"], "m");
        assert!(call_result("hi", true, None).get("resultType").is_none());
        let l = list_result(
            vec![tool("a", "b", &json!({"type": "object"}))],
            Some(&info),
            0,
        );
        assert_eq!(
            (l["cacheScope"].as_str(), l["ttlMs"].as_u64()),
            (Some("public"), Some(0))
        );
        assert_eq!(discover_result(&info)["supportedVersions"][0], "2026-07-28");
    }

    #[test]
    fn header_values_decode_the_base64_form() {
        assert_eq!(header_value("kv_get").as_deref(), Some("kv_get"));
        assert_eq!(
            header_value("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(header_value("=?base64?***?="), None);
    }
}
