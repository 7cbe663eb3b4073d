//! Where a call is going and how it is placed: what every way of placing one reads.

use crate::livekit::Join;
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
}
