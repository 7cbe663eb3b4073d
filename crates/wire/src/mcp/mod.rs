//! The Model Context Protocol on the wire: JSON-RPC 2.0 messages as they are read and
//! written (`jsonrpc.rs`: every message kind, the protocol's own error codes, never a
//! panic on bad bytes), and what MCP puts inside them (`protocol.rs`: the protocol
//! versions of both eras, the `_meta` keys, the results of `initialize`,
//! `server/discover`, `tools/list` and `tools/call`, the SSE event that carries a reply).
//! Which tools exist, what they answer and when is the mock's business (`mock::mcp`).

pub mod jsonrpc;
pub mod protocol;
