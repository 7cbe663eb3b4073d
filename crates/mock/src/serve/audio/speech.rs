//! `POST /v1/audio/speech`: the text spoken by the voice (so the audio carries its words),
//! as long as the text takes to say at the scenario's speaking rate, its first byte after
//! the time to first byte, the rest in chunks that stream faster than they play — raw
//! `mp3` (the API's default), `opus` (Ogg), `flac`, `pcm` or `wav`, or SSE events. The
//! speech is the session's whose reply holds the text.

use super::said::Coding;
use super::stream::{body, deadlines, Paced};
use crate::serve::app::App;
use crate::serve::body::read_body;
use crate::serve::errors::refuse_as;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use tokio::time::Instant;
use wire::audio::realtime::AudioFormat;
use wire::audio::speech::{self, SpeechFormat, SpeechRequest, RATE};
use wire::{Api, WireError};

pub async fn handle(app: Arc<App>, headers: HeaderMap, b: Body) -> Response {
    app.stats.requests.fetch_add(1, Relaxed);
    let request_id = format!("req_speech_{:016x}", app.stats.requests.load(Relaxed));
    let refused =
        |e: &WireError| refuse_as(&app, "speech request", Api::ChatCompletions, e, &request_id);
    let bytes = match read_body(&app, &headers, b).await {
        Ok(b) => b,
        Err(e) => return refused(&e),
    };
    let start = Instant::now();
    let req = match speech::parse(&bytes) {
        Ok(r) => r,
        Err(e) => return refused(&e),
    };
    if app.scenario.model(&req.model).is_none() {
        return refused(&app.unknown_model(&req.model));
    }
    let seconds = app.scenario.audio.seconds_of(&req.input) / req.speed;
    let Some(pcm) = super::spoken(&app, &req.input, seconds, AudioFormat::Pcm24).await else {
        let e = WireError::invalid("input", "could not be spoken");
        return refused(&e);
    };
    let set = app.scenario.audio;
    let seconds = super::said::seconds_of(pcm.len(), AudioFormat::Pcm24);
    let coding = match req.format {
        SpeechFormat::Mp3 => Some(Coding::Mp3),
        SpeechFormat::Opus => Some(Coding::Opus),
        SpeechFormat::Flac => Some(Coding::Flac),
        SpeechFormat::Pcm | SpeechFormat::Wav => None,
    };
    let audio = match coding {
        Some(c) => match super::coded(&app, &req.input, seconds, &pcm, c).await {
            Some(coded) => coded,
            None => {
                let e = WireError::invalid("input", "could not be encoded as asked");
                return refused(&e);
            }
        },
        None => pcm,
    };
    let session = super::owner_of_spoken(&app, &req.input)
        .unwrap_or_else(|| crate::ledger::ANONYMOUS.to_string());
    app.ledger.aloud.said(&session, &req.input);
    app.ledger.voice(&session, |v| {
        v.tts_calls += 1;
        v.tts_first_byte_ms += set.tts_first_byte_ms;
        v.spoken_s += seconds;
    });
    let frames = frames(&req, &audio, seconds, set);
    let mut resp = Response::new(body(Paced {
        app: app.clone(),
        start,
        frames,
    }));
    let h = resp.headers_mut();
    let ct = if req.sse {
        "text/event-stream; charset=utf-8"
    } else {
        req.format.content_type()
    };
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    crate::serve::headers::add_request_id(h, Api::ChatCompletions, &request_id);
    resp
}

/// The body's pieces and when each leaves: chunks of `chunk_ms` of audio (a WAV header
/// before the first; whole frames of MP3), or SSE events with the done event after the
/// last chunk. Raw chunks are slices of the one copy of the speech, which plays for
/// `seconds`.
fn frames(
    req: &SpeechRequest,
    audio: &Bytes,
    seconds: f64,
    set: crate::spec::audio::AudioSettings,
) -> Vec<(std::time::Duration, Bytes)> {
    // A chunk's bytes, and the milliseconds it plays for (whole frames of MP3: 96 ms for
    // 100; a stream's share of Opus's or FLAC's bytes, whose frames differ in size), which
    // its deadline follows so the stream keeps real time.
    let (per, per_ms) = match req.format {
        SpeechFormat::Mp3 => {
            let b = super::mp3::chunk_bytes(set.chunk_ms);
            (b, super::mp3::seconds_of(b) * 1000.0)
        }
        SpeechFormat::Opus | SpeechFormat::Flac => {
            let n = (seconds * 1000.0 / set.chunk_ms).round().max(1.0);
            let per = audio.len().div_ceil(n as usize).max(1);
            (per, seconds * 1000.0 / n)
        }
        SpeechFormat::Pcm | SpeechFormat::Wav => (
            super::said::chunk_bytes(AudioFormat::Pcm24, set.chunk_ms),
            set.chunk_ms,
        ),
    };
    let chunks: Vec<Bytes> = (0..audio.len())
        .step_by(per)
        .map(|at| audio.slice(at..(at + per).min(audio.len())))
        .collect();
    let due = deadlines(
        chunks.len().max(1),
        set.tts_first_byte_ms,
        per_ms,
        set.tts_speed,
    );
    let mut out: Vec<(std::time::Duration, Bytes)> = Vec::with_capacity(chunks.len() + 2);
    if req.format == SpeechFormat::Wav && !req.sse {
        out.push((due[0], Bytes::from(wav_header(audio.len()))));
    }
    for (i, c) in chunks.iter().enumerate() {
        let piece = match (req.sse, req.format, i) {
            (true, SpeechFormat::Wav, 0) => Bytes::from(speech::delta_event(
                &[wav_header(audio.len()), c.to_vec()].concat(),
            )),
            (true, _, _) => Bytes::from(speech::delta_event(c)),
            (false, _, _) => c.clone(),
        };
        out.push((due[i], piece));
    }
    if req.sse {
        let input = wire::count_tokens(&req.input);
        let output = wire::audio::audio_tokens(seconds, wire::audio::OUTPUT_AUDIO_TOKENS_PER_S);
        let last = *due.last().unwrap_or(&std::time::Duration::ZERO);
        out.push((last, Bytes::from(speech::done_event(input, output))));
    }
    out
}

/// A 44-byte RIFF header for `data` bytes of 16-bit mono PCM at 24 kHz.
fn wav_header(data: usize) -> Vec<u8> {
    let mut h = Vec::with_capacity(44);
    let d = data as u32;
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&(36 + d).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&RATE.to_le_bytes());
    h.extend_from_slice(&(RATE * 2).to_le_bytes());
    h.extend_from_slice(&2u16.to_le_bytes());
    h.extend_from_slice(&16u16.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&d.to_le_bytes());
    h
}
