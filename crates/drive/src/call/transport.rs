//! What every transport a call runs over does, and nothing more: place the call (its
//! setup counted), open it, send a frame of the caller's audio on its clock, read what
//! the bot sent, return a mark, hang up. Twilio Media Streams (`twilio`) and raw PCM
//! (`pcm`) run over a WebSocket (`ws`, under both); WebRTC (`webrtc`) over a peer that
//! SmallWebRTC, WHIP or LiveKit signals (`rtc`). What a call measures is the call's
//! (`call`), the playback clock `playback`'s, the sums `tally`'s: none depends on the
//! transport, and no transport imports another.

use crate::run::tally::Tally;
use crate::run::Failure;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// What a message from the bot was.
#[derive(Debug, PartialEq)]
pub(crate) enum Heard {
    /// Audio at the line's rate, as it arrives.
    Audio(Vec<f32>),
    /// Audio at the line's rate decoded after its packet arrived, and when that was (a
    /// WebRTC call's, decoded off the clock).
    Arrived(Vec<f32>, std::time::Instant),
    /// A mark to return once the audio before it has played.
    Mark(String),
    /// Drop the audio queued for playback.
    Clear,
    /// Something the line does not act on.
    Ignored,
    /// Not what the line speaks: why.
    Bad(String),
}

/// Where the call goes: the session's url (filled), its headers, how long it may take.
pub(crate) struct Dial<'a> {
    pub url: &'a str,
    pub headers: Vec<(String, String)>,
    /// The call's own name (the session's, with its nonce): a LiveKit call's room.
    pub name: String,
    /// The whole of placing it (the session's turn_timeout_ms).
    pub timeout: Duration,
    /// Twilio's `start.customParameters`, filled.
    pub custom: Vec<(String, String)>,
}

/// One placed call, as the call drives it.
pub(crate) trait Transport: Send {
    /// What opens the call once placed (Twilio's `connected` and `start`).
    fn open(&mut self) -> impl Future<Output = Result<(), Failure>> + Send;

    /// Turn `i`'s words are said from the next frame (a transport that coded them ahead
    /// sends their packets; one that sends samples is given them frame by frame).
    fn say(&mut self, i: usize);

    /// One frame of the caller's audio (`samples`, at the line's rate), `at_ms` after the
    /// call began.
    fn frame(
        &mut self,
        samples: &[f32],
        at_ms: u64,
    ) -> impl Future<Output = Result<(), Failure>> + Send;

    /// A mark the bot sent has played: returned where the line has marks (Twilio's).
    fn mark(&mut self, name: &str) -> impl Future<Output = Result<(), Failure>> + Send;

    /// When the bot's audio heard so far is complete to: the arrival of the oldest packet
    /// still being decoded where decoding runs off the clock, else `now`.
    fn heard_to(&self, now: Instant) -> Instant;

    /// What the bot sent next; an error when the call broke.
    fn next(&mut self) -> impl Future<Output = Result<Heard, Failure>> + Send;

    /// Hangs up, what the network did to the call counted in `tally`.
    fn hang_up(self, tally: &Tally) -> impl Future<Output = ()> + Send;
}

/// A call placed by `placing`: its setup time counted on the tally when it was, a
/// dropped call when not.
pub(crate) async fn placed<T>(
    tally: &Tally,
    placing: impl Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    let began = Instant::now();
    let out = placing.await;
    match &out {
        Ok(_) => tally.call(Some(began.elapsed())),
        Err(_) => tally.dropped(),
    }
    out
}
