//! The scenario's tables that the mock's folders read beside the provider's own: how its
//! voice keeps time (`audio`: the `[audio]` table) and the MCP tools it serves (`mcp`: the
//! `[mcp]` table). They import nothing of the mock, so the provider's scenario, the audio
//! and the MCP server each take them from below.

pub mod audio;
pub mod mcp;
