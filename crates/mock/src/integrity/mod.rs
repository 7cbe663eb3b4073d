//! Whether the system under test kept its conversations intact: the oracle that checks
//! every conversation it sends (`oracle.rs`: echo, isolation, history, with what the
//! mock said compared in `said.rs` and what is wrong collected in `found.rs`), and the
//! reasoning it sends back (`reasoning.rs`), whether its prompts keep what the
//! provider cached for them (`cache_breaks.rs`), and the results of the mock's MCP tools
//! on their way from the MCP server to the next model call (`mcp.rs`).
//!
//! What the mock said to whom, which the oracle compares against, is the ledger's
//! (`ledger/`); which session a request belongs to is `session.rs`'s.

pub mod cache_breaks;
mod found;
pub mod mcp;
pub mod oracle;
pub mod reasoning;
mod said;
