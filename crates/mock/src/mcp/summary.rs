//! What the MCP side of the mock reports: its tool calls in all, per tool (latency
//! percentiles, errors), per agent session, by transport, the errors by kind, and how
//! agent sessions map onto MCP sessions (one each, or many sharing one). Part of the
//! ledger's summary (`GET /plimsoll/ledger`, key `mcp`). Fields are declared in the order
//! serde_json writes map keys, as every summary of the ledger is. Types only: recording
//! is `ledger.rs`'s.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct McpSummary {
    /// `tools/call` requests answered (with a result or an error).
    pub calls: u64,
    /// Calls that failed: a JSON-RPC error or an `isError` result.
    pub errors: u64,
    /// Errors of every request by kind: `rpc_error`, `tool_error` (injected),
    /// `invalid_arguments`, `not_found`, `unknown_tool`, and the protocol's own
    /// (`parse_error`, `invalid_request`, `method_not_found`, `unsupported_version`,
    /// `header_mismatch`, `no_session`).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Distinct MCP sessions that called tools: `Mcp-Session-Id`s handed out at
    /// `initialize`, and stdio servers (a connection each).
    pub mcp_sessions: u64,
    /// Every JSON-RPC message received.
    pub requests: u64,
    /// Per agent session (whose model asked for the call): calls, tool time, per tool.
    pub sessions: BTreeMap<String, McpSession>,
    /// Agent sessions per MCP session, on average (1: one MCP session each; more: shared).
    pub sessions_per_mcp_session: f64,
    /// Distinct `plimsoll mcp --stdio` processes that served calls.
    pub stdio_servers: u64,
    pub tools: BTreeMap<String, McpTool>,
    /// Calls by transport: `http`, `stdio`.
    pub transports: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct McpSession {
    pub calls: u64,
    /// The time the mock took for this session's tool calls (as scheduled): part of what
    /// the session would take if the system under test added nothing.
    pub ms: f64,
    pub tools: BTreeMap<String, u64>,
}

/// A tool's calls, errors and scheduled latency: RESULT's own type, written as it is.
pub use result::McpTool;
