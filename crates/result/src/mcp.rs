//! The tool hop of a step, when the SUT called the mock's MCP tools: calls, latency per
//! tool, errors by kind, how the agent's sessions map onto MCP sessions, and — when it
//! runs stdio tool servers — what they cost: processes per session and memory per
//! server. Types only.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// RESULT's `mcp`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Mcp {
    /// `tools/call` requests the mock answered.
    pub calls: u64,
    /// Calls per agent session (whose model asked for them), on average.
    pub calls_per_session: f64,
    /// Calls that failed (a JSON-RPC error or an `isError` result).
    pub errors: u64,
    /// Errors of every MCP request by kind: injected (`rpc_error`, `tool_error`), the
    /// tools' own (`invalid_arguments`, `not_found`, `unknown_tool`) and the protocol's.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Distinct MCP sessions (`Mcp-Session-Id`s, stdio connections) that called tools.
    pub mcp_sessions: u64,
    /// Agent sessions per MCP session, on average (1: one each; more: shared).
    pub sessions_per_mcp_session: f64,
    /// Per tool: calls, errors, the latency the mock gave it.
    pub tools: BTreeMap<String, McpTool>,
    /// Calls by transport (`http`, `stdio`).
    pub transports: BTreeMap<String, u64>,
    /// The stdio tool servers in the SUT's process tree, when it ran any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stdio: Option<McpStdio>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct McpTool {
    pub calls: u64,
    pub errors: u64,
    /// The tool's latency as the mock scheduled it, over its calls.
    pub max_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

/// What the SUT's stdio MCP servers cost (they are part of its tree: its RSS counts them).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct McpStdio {
    /// The most stdio server processes alive at once.
    pub peak_processes: u32,
    /// That over the step's concurrency.
    pub processes_per_session: f64,
    /// Their RSS at its highest, over their count at its highest: memory per server.
    pub rss_mb_per_server: f64,
    /// Their RSS together at its highest.
    pub peak_rss_mb: f64,
    /// Their OS threads together at the most.
    pub peak_threads: u64,
    /// Distinct server processes that served calls over the step.
    pub servers_seen: u64,
}

/// How the stdio MCP servers grew with sessions over a ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct StdioGrowth {
    /// Server processes per added session (the slope).
    pub per_session: f64,
    /// A server's RSS, MB (the median over the steps).
    pub mb_each: f64,
    /// The steps it was read from, and the highest concurrency among them.
    pub steps: usize,
    pub up_to: usize,
}
