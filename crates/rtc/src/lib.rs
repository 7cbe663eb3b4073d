//! A voice call's audio over WebRTC, as a browser or an app places it. The offer is made
//! and signalled the way the bot speaks (Pipecat's SmallWebRTC `POST /api/offer`, WHIP, or a
//! LiveKit room joined over its `/rtc` signal connection: `livekit`),
//! ICE on host candidates, DTLS-SRTP, one Opus track each way with RTCP reports (str0m,
//! sans-IO, on Plimsoll's own runtime), the caller's words encoded ahead of their time
//! (`encode`, off the call's clock) and the bot's packets decoded off the clock (`Decoding`). What the call measures is the caller's business (`drive::call`).

mod call;
mod codec;
mod decode;
mod error;
pub mod livekit;
mod peer;
mod place;
mod run;
mod signal;

pub use call::open;
pub use codec::{encode, silence};
pub use decode::{Audio, Backlog, Decoding};
pub use error::CallError;
pub use peer::{Line, Setup};
pub use place::Place;
pub use run::NetStats;
pub use signal::Signaling;
