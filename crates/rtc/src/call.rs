//! Where placing a call is decided: a LiveKit room is joined (`livekit`), any other bot
//! takes the caller's offer over HTTP (`peer`).

use crate::error::CallError;
use crate::peer::{self, Line, Setup};
use crate::place::Place;
use crate::signal::Signaling;

/// Places a call as `p.how` says: ICE and DTLS done, the line ready for the caller's frames.
pub async fn open(p: &Place<'_>) -> Result<(Line, Setup), CallError> {
    match (p.how, p.livekit) {
        (Signaling::LiveKit, Some(join)) => crate::livekit::open(p, join).await,
        (Signaling::LiveKit, None) => Err(CallError::new(
            "signaling",
            "a LiveKit call needs its key pair and room (rtc::livekit::Join)",
        )),
        _ => peer::open(p).await,
    }
}
