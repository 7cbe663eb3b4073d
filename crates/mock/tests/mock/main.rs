//! The mock's integration tests, one executable (one link, not three): `serve`, the mock
//! served on 127.0.0.1 and spoken to in raw HTTP/1.1; `mcp`, its MCP server over TCP and
//! stdio; `scenarios`, every scenario the repository ships loads.

mod mcp;
mod scenarios;
mod serve;
mod spoken;
