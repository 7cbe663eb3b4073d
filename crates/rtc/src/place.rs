//! Where a call is going and how it is placed: what every way of placing one reads, and
//! what a LiveKit room's call reads besides (`Join`).

use crate::signal::Signaling;
use std::time::Duration;

/// Where a call is going and how it is placed.
pub struct Place<'a> {
    pub how: Signaling,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    /// The call's audio rate (Opus codes at 8, 12, 16, 24 or 48 kHz).
    pub rate: u32,
    /// Frame length: the RTP clock advances this much a frame.
    pub frame: Duration,
    /// ICE and DTLS must be done this long after the answer.
    pub connect_timeout: Duration,
    /// With `Signaling::LiveKit`: the key pair, the agent's dispatch, the call's room and
    /// the caller's identity (the server is `url`).
    pub livekit: Option<&'a Join>,
    /// The lanes the bot's packets are decoded on, off the call's clock.
    pub decoding: &'a crate::Decoding,
}

/// How the agent comes into a call's room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// The server sends a worker's agent when the room is made (a worker with no agent name).
    Automatic,
    /// The server API sends the agent registered under this name.
    Named(String),
}

/// What a call into LiveKit needs besides where the server is: the key pair that signs its
/// tokens, how its agent comes, its room and the caller's identity there.
#[derive(Clone, Debug)]
pub struct Join {
    pub key: String,
    pub secret: String,
    pub dispatch: Dispatch,
    pub room: String,
    pub identity: String,
}
