//! LiveKit as a call's signaling: a room per call made through the server's API, the agent
//! sent into it (dispatched by name, or by the server when the room is made), and the
//! caller joined over LiveKit's `/rtc` signal connection with an access token signed by the
//! API key and secret; then the call's audio on LiveKit's two connections (`open`).

mod api;
mod join;
mod line;
mod room;
mod server;
mod token;

pub use crate::place::{Dispatch, Join};
pub(crate) use line::open;
pub use room::{enter, Entered};
pub use server::Server;
