//! The MCP server, whatever carries its messages: one JSON-RPC message in, its answer
//! out (with the delay the tool takes and the HTTP status it goes with). Both eras of the
//! protocol are served on one endpoint, as a dual-era server may: a request whose
//! `params._meta` names a protocol version is served statelessly (2026-07-28:
//! `server/discover`, `tools/list`, `tools/call`), checked as the official SDKs check it
//! (envelope, then the HTTP headers that mirror it, then the version); `initialize`
//! opens a legacy session (2024-11-05 … 2025-11-25: `ping`, `tools/list`, `tools/call`
//! within it, `Mcp-Session-Id` on HTTP, the connection on stdio). Running a tool is
//! `call.rs`'s; HTTP and stdio are `http.rs`'s and `stdio.rs`'s.

use crate::mcp::ledger::McpLedger;
use crate::mcp::tools::Kv;
use crate::spec::mcp::McpSpec;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;
use wire::mcp::jsonrpc::{self, code, Message, RpcError};
use wire::mcp::protocol::{self, ServerInfo};

/// How a message reached the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Http,
    Stdio,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Stdio => "stdio",
        }
    }
}

/// The HTTP headers a stateless request mirrors its body in.
#[derive(Clone, Debug, Default)]
pub struct Mirrored {
    pub version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// Where a message came from.
#[derive(Clone, Debug)]
pub struct Via<'a> {
    pub transport: Transport,
    /// The legacy session it came in: HTTP's `Mcp-Session-Id`, or the stdio connection's.
    pub session: Option<&'a str>,
    /// HTTP only: the mirrored headers (checked on stateless requests).
    pub headers: Option<&'a Mirrored>,
    /// A stdio server relaying to this one: its process id.
    pub pid: Option<u32>,
}

/// The answer to one message.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The HTTP status it goes with.
    pub status: u16,
    /// One JSON-RPC message; none for a notification or a response (HTTP: 202).
    pub body: Option<String>,
    /// How long the tool takes: the body is sent this much later.
    pub delay: Duration,
    /// A legacy session opened by `initialize`.
    pub new_session: Option<String>,
}

impl Answer {
    fn accepted() -> Answer {
        Answer {
            status: 202,
            body: None,
            delay: Duration::ZERO,
            new_session: None,
        }
    }

    pub(crate) fn ok(id: &Value, result: Value) -> Answer {
        Answer {
            status: 200,
            body: Some(jsonrpc::result(id, result)),
            delay: Duration::ZERO,
            new_session: None,
        }
    }

    pub(crate) fn error(id: &Value, e: &RpcError, status: u16) -> Answer {
        Answer {
            status,
            body: Some(jsonrpc::error(id, e)),
            delay: Duration::ZERO,
            new_session: None,
        }
    }
}

/// The kind an error is counted under.
pub(crate) fn kind_of(code: i64) -> &'static str {
    match code {
        code::PARSE_ERROR => "parse_error",
        code::INVALID_REQUEST => "invalid_request",
        code::METHOD_NOT_FOUND => "method_not_found",
        code::INVALID_PARAMS => "invalid_params",
        code::HEADER_MISMATCH => "header_mismatch",
        code::UNSUPPORTED_PROTOCOL_VERSION => "unsupported_version",
        _ => "internal_error",
    }
}

pub struct McpServer {
    pub spec: McpSpec,
    pub(crate) seed: u64,
    pub(crate) info: ServerInfo,
    pub ledger: McpLedger,
    pub(crate) kv: Kv,
    /// Legacy sessions opened by `initialize`: id → the version agreed.
    sessions: Mutex<HashMap<String, &'static str>>,
    next_session: AtomicU64,
    /// Calls so far per tool, and attempts per call (tool and arguments hashed).
    pub(crate) nth: Mutex<HashMap<String, u64>>,
    pub(crate) attempts: Mutex<HashMap<u64, u64>>,
}

impl McpServer {
    pub fn new(spec: &McpSpec, seed: u64) -> McpServer {
        McpServer {
            info: ServerInfo {
                name: spec.server_name.clone(),
                version: env!("CARGO_PKG_VERSION").into(),
                instructions: spec.instructions.clone(),
            },
            spec: spec.clone(),
            seed,
            ledger: McpLedger::default(),
            kv: Kv::new(),
            sessions: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            nth: Mutex::new(HashMap::new()),
            attempts: Mutex::new(HashMap::new()),
        }
    }

    /// Answers one message (its bytes as received).
    pub fn handle(&self, bytes: &[u8], via: &Via) -> Answer {
        self.ledger.request();
        match jsonrpc::parse(bytes) {
            Err(r) => self.refuse(&r.id, r.error, 400),
            Ok(Message::Request { id, method, params }) => {
                self.request(&id, &method, params.as_ref(), via)
            }
            // Notifications (initialized, cancelled) need no answer; nor do responses, as
            // this server never asks the client anything.
            Ok(_) => Answer::accepted(),
        }
    }

    /// Ends a legacy session (HTTP DELETE); false when there was none of that id.
    pub fn end_session(&self, id: &str) -> bool {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
            .is_some()
    }

    fn refuse(&self, id: &Value, e: RpcError, status: u16) -> Answer {
        self.ledger.refused(kind_of(e.code));
        Answer::error(id, &e, status)
    }

    fn request(
        &self,
        id: &Value,
        method: &str,
        params: Option<&Map<String, Value>>,
        via: &Via,
    ) -> Answer {
        if method != "initialize" && protocol::meta_version(params).is_some() {
            return self.stateless(id, method, params, via);
        }
        match method {
            "initialize" => self.initialize(id, params),
            "ping" => Answer::ok(id, json!({})),
            _ => match self.legacy_session(via) {
                Err((e, status)) => self.refuse(id, e, status),
                Ok(session) => self.legacy(id, method, params, via, session),
            },
        }
    }

    /// A request of the stateless revision: envelope, mirrored headers, version, method.
    fn stateless(
        &self,
        id: &Value,
        method: &str,
        params: Option<&Map<String, Value>>,
        via: &Via,
    ) -> Answer {
        let version = match protocol::envelope(params) {
            Ok(v) => v,
            Err(e) => return self.refuse(id, e, 400),
        };
        if let Some(h) = via.headers {
            if let Some(e) = mismatch(h, version, method, params) {
                return self.refuse(id, e, 400);
            }
        }
        if let Err(e) = protocol::served(version) {
            return self.refuse(id, e, 400);
        }
        let info = Some(&self.info);
        match method {
            "server/discover" => Answer::ok(id, protocol::discover_result(&self.info)),
            "tools/list" => Answer::ok(id, protocol::list_result(self.tool_list(), info, 0)),
            "tools/call" => self.call(id, params, via, None, info),
            _ => self.unknown(id, method, 404),
        }
    }

    /// An unknown method: 404 for a stateless request (as the official SDKs' servers
    /// answer it), 200 within a legacy session (as they did then).
    fn unknown(&self, id: &Value, method: &str, status: u16) -> Answer {
        let e = RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        );
        self.refuse(id, e, status)
    }

    fn initialize(&self, id: &Value, params: Option<&Map<String, Value>>) -> Answer {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str);
        let version = protocol::negotiate(asked);
        let n = self.next_session.fetch_add(1, Relaxed);
        let sid = format!(
            "mcp-{:016x}",
            crate::hash::fnv1a(self.seed, &n.to_le_bytes())
        );
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(sid.clone(), version);
        let mut a = Answer::ok(id, protocol::initialize_result(version, &self.info));
        a.new_session = Some(sid);
        a
    }

    /// The legacy session a request belongs to: it must name one that `initialize` opened.
    fn legacy_session<'a>(&self, via: &Via<'a>) -> Result<&'a str, (RpcError, u16)> {
        let Some(sid) = via.session else {
            let e = RpcError::new(
                code::INVALID_REQUEST,
                "Bad Request: no session; send initialize first (or a stateless request whose params._meta names its protocol version)",
            );
            return Err((e, 400));
        };
        if self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(sid)
        {
            Ok(sid)
        } else {
            Err((
                RpcError::new(code::INVALID_REQUEST, format!("Session not found: {sid}")),
                404,
            ))
        }
    }

    fn legacy(
        &self,
        id: &Value,
        method: &str,
        params: Option<&Map<String, Value>>,
        via: &Via,
        sid: &str,
    ) -> Answer {
        match method {
            "tools/list" => Answer::ok(id, protocol::list_result(self.tool_list(), None, 0)),
            "tools/call" => self.call(id, params, via, Some(sid), None),
            _ => self.unknown(id, method, 200),
        }
    }

    fn tool_list(&self) -> Vec<Value> {
        self.spec
            .tools
            .iter()
            .map(|t| protocol::tool(&t.name, &t.description, &t.input_schema))
            .collect()
    }

    /// A model asked `session` for these tool calls (name, arguments as JSON text):
    /// those to this server's tools are noted, so the MCP calls that follow are traced
    /// to the session.
    pub fn note_calls<'a>(&self, session: &str, calls: impl Iterator<Item = (&'a str, &'a str)>) {
        for (name, args) in calls {
            if self.spec.tool(name).is_some() {
                if let Some(c) = crate::mcp::tools::canonical_text(args) {
                    self.ledger.issued(c, session, name);
                }
            }
        }
    }
}

/// What a stateless HTTP request's mirrored headers get wrong, if anything.
fn mismatch(
    h: &Mirrored,
    version: &str,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Option<RpcError> {
    let bad = |what: &str| {
        Some(RpcError::new(
            code::HEADER_MISMATCH,
            format!("Header mismatch: {what}"),
        ))
    };
    if h.version.as_deref() != Some(version) {
        return bad(&format!(
            "MCP-Protocol-Version {:?} does not match _meta's {version:?}",
            h.version
        ));
    }
    if h.method.as_deref() != Some(method) {
        return bad(&format!(
            "Mcp-Method {:?} does not match the body's method {method:?}",
            h.method
        ));
    }
    if method == "tools/call" {
        if let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) {
            let sent = h.name.as_deref().and_then(protocol::header_value);
            if sent.as_deref() != Some(name) {
                return bad(&format!(
                    "Mcp-Name {:?} does not match the body's name {name:?}",
                    h.name
                ));
            }
        }
    }
    None
}
