//! Tools served over the Model Context Protocol: the scenario's `[mcp]` section
//! (`crate::spec::mcp`), what each tool answers (`tools.rs`), the server that answers one
//! JSON-RPC message of either era of the protocol (`server.rs`) and runs one tool call
//! with its latency and failures (`call.rs`), what it served to whom (`ledger.rs`,
//! reported as `summary.rs`), and its transports: Streamable HTTP at `/mcp`
//! (`serve::mcp_http`) and stdio (`stdio.rs`, relaying to a running mock with `relay.rs`;
//! its framing is `lines.rs`). The JSON-RPC bytes are `wire::mcp`'s; the check that tool results reach the next model call
//! intact is the oracle's (`integrity/mcp.rs`).

pub mod call;
pub mod ledger;
pub mod lines;
pub mod relay;
pub mod server;
pub mod stdio;
pub mod summary;
pub mod tools;
