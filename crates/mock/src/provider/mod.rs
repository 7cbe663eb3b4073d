//! The synthetic model itself: the scenario file (`scenario.rs`, `model_file.rs`), what
//! one model is (`model.rs`), its scripted choreography (`script.rs`), the reply it
//! decides (`reply.rs`) with its reasoning and seals (`thoughts.rs`), the words and tool
//! arguments it makes up (`invent.rs`), when each chunk is due (`timing.rs`), its
//! embedding vectors (`embed.rs`), the responses it stores for a later request to go on
//! from (`chain.rs`), and the answers of a recorded workload replayed (`replay.rs`).
//!
//! What it says, never how: the bytes are `wire`'s, the sending is `serve`'s.

pub mod chain;
pub mod embed;
pub mod invent;
pub mod model;
mod model_file;
pub mod replay;
pub mod reply;
pub mod scenario;
pub mod scenario_file;
pub mod script;
pub mod thoughts;
pub mod timing;
