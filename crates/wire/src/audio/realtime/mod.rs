//! The Realtime API over WebSocket (GA, as `client.realtime.connect` in the Python SDK and
//! `OpenAIRealtimeWS` in Node speak it): the session object and `session.update` merged
//! into it (`session`), the client's events read (`client`: a bad one is an error event,
//! never a dropped socket), the server's events written (`server`), and a conversation's
//! items as one normalized [`crate::Request`] so the mock decides and checks a Realtime
//! response as it does a chat call (`items`).

pub mod client;
pub mod items;
pub mod server;
pub mod session;

pub use client::ClientEvent;
pub use items::{Content, Item};
pub use session::{AudioFormat, ServerVad, Session};
