//! The audio APIs the mock speaks, as OpenAI serves them: text to speech (`speech`:
//! `POST /v1/audio/speech`, raw audio or SSE, paced like speech), speech to text
//! (`transcribe`: `POST /v1/audio/transcriptions`, its latency growing with the audio),
//! and the Realtime API over WebSocket (`realtime`: server VAD, responses that speak).
//! The voice itself — the words carried in the audio, heard back from it — is the `voice`
//! crate's; the wire shapes are `wire::audio`'s; how they keep time is the scenario's
//! `[audio]` table (`settings`). What each did goes to the ledger per session.

pub mod realtime;
pub mod settings;
pub mod speech;
mod stream;
pub mod transcribe;

use crate::serve::app::App;

/// The session a text to speak belongs to: the one whose reply holds it (speech of a
/// reply carries no marker of its own), else the one its own marker names.
pub(crate) fn owner_of_spoken(app: &App, text: &str) -> Option<String> {
    app.ledger.owner_of_spoken(text).or_else(|| {
        crate::session::markers(text)
            .into_iter()
            .next()
            .map(|m| m.session)
    })
}
