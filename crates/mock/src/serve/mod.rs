//! The HTTP side of the mock: start and stop (`server.rs`, `run.rs`), the routes
//! (`routes.rs`) and admin endpoints (`admin.rs`), the shared state
//! every handler reads (`app.rs`), one API call from body bytes to the timed answer
//! (`call.rs`, its body read under the size limit in `body.rs`) with its use of the prompt cache (`prompt_cache.rs`) and its sending
//! (`deliver.rs`), embeddings (`embeddings.rs`), every answer that is not a reply
//! (`errors.rs`) and the headers it reads and writes (`headers.rs`), its own measurements
//! (`stats.rs`, `metrics.rs`) and the shards' rendezvous (`rendezvous.rs`); the audio
//! APIs (`audio/`: speech, transcriptions, the Realtime API) and MCP's Streamable HTTP
//! (`mcp_http.rs`), handlers over the same shared state.
//!
//! What to answer is decided in `provider/`, `pushback/`, `failures/` and `integrity/`;
//! how each API writes it is `wire`'s.

pub(crate) mod admin;
pub mod app;
pub mod audio;
pub(crate) mod body;
pub(crate) mod call;
pub(crate) mod deliver;
pub(crate) mod embeddings;
pub(crate) mod errors;
pub(crate) mod headers;
pub mod mcp_http;
pub(crate) mod metrics;
pub(crate) mod prompt_cache;
pub mod refusals;
pub mod rendezvous;
pub mod routes;
pub mod run;
pub mod server;
pub mod stats;
