//! The audio APIs the mock speaks, as OpenAI serves them: text to speech (`speech`:
//! `POST /v1/audio/speech`, raw audio or SSE, paced like speech), speech to text
//! (`transcribe`: `POST /v1/audio/transcriptions`, its latency growing with the audio),
//! and the Realtime API over WebSocket (`realtime`: server VAD, responses that speak).
//! The voice itself — the words carried in the audio, heard back from it — is the `voice`
//! crate's; the wire shapes are `wire::audio`'s; how they keep time is the scenario's
//! `[audio]` table (`crate::spec::audio`). What each did goes to the ledger per session. Speaking
//! and hearing run on the voice's pool (`off_clock`), at a lowered priority: beside a
//! driver's calls, its 20 ms frames come first.

mod flac;
pub mod mp3;
mod ogg_opus;
pub mod realtime;
pub mod said;
pub mod speech;
mod stream;
pub mod transcribe;
mod upload;

use crate::serve::app::App;
use bytes::Bytes;
use wire::audio::realtime::AudioFormat;

/// Threads the mock speaks and hears on, and their priority: below the threads that send
/// and pace audio, above the caller's own reading of replies (19).
const POOL_NICE: i32 = 10;

/// The pool the mock's audio work runs on, its threads named after the mock's (`name`):
/// a thread for each core the mock may use (its affinity and quota: one when it is held
/// to one core).
pub(crate) fn pool(name: &str) -> voice::pool::Pool {
    let cores = voice::pool::cores();
    voice::pool::Pool::new(&format!("{name}-voice"), cores, POOL_NICE)
}

/// Runs `f` on the mock's voice pool; None when the pool is gone.
pub(crate) async fn off_clock<T: Send + 'static>(
    app: &App,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    app.voice_pool.submit(move || {
        let _ = done.send(f());
    });
    result.await.ok()
}

/// `text` spoken for `seconds` in `format` (16-bit PCM at 24 kHz, or G.711 at 8 kHz):
/// kept from a request for the same a moment ago, or made and encoded off the runtime's
/// threads (a long text takes milliseconds to synthesize). None when it cannot be said.
pub(crate) async fn spoken(
    app: &App,
    text: &str,
    seconds: f64,
    format: AudioFormat,
) -> Option<Bytes> {
    if let Some(kept) = app.said.get(text, seconds, format) {
        return Some(kept);
    }
    let t = text.to_string();
    let audio = off_clock(app, move || {
        voice::speak_for(&t, format.rate(), seconds).map(|x| Bytes::from(said::encode(&x, format)))
    })
    .await
    .flatten()?;
    app.said.put(text, seconds, format, audio.clone());
    Some(audio)
}

/// `pcm` (the speech of `text` lasting `seconds`, 16-bit at 24 kHz) in a compressed
/// `coding` (MP3, Ogg Opus or FLAC): kept from a request for the same a moment ago, or
/// encoded from those samples off the runtime's threads (never synthesized a second
/// time). None when the encoder refuses, or `coding` is raw.
pub(crate) async fn coded(
    app: &App,
    text: &str,
    seconds: f64,
    pcm: &Bytes,
    coding: said::Coding,
) -> Option<Bytes> {
    if let Some(kept) = app.said.get(text, seconds, coding) {
        return Some(kept);
    }
    let encode = match coding {
        said::Coding::Mp3 => mp3::encode,
        said::Coding::Opus => ogg_opus::encode,
        said::Coding::Flac => flac::encode,
        said::Coding::Raw(_) => return None,
    };
    let pcm = pcm.clone();
    let audio = off_clock(app, move || encode(&pcm).map(Bytes::from))
        .await
        .flatten()?;
    app.said.put(text, seconds, coding, audio.clone());
    Some(audio)
}

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
