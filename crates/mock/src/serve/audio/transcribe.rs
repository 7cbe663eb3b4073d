//! `POST /v1/audio/transcriptions`: the multipart form read as it streams in (a file over
//! the API's 25 MB is refused before it is buffered), the audio decoded off the serving
//! threads (WAV of PCM, µ-law or A-law; raw 16-bit PCM at 24 kHz; raw µ-law at 8 kHz;
//! mp3, FLAC, m4a, Ogg and WebM as `upload` reads them), the words the voice
//! carries heard from the audio itself, and the answer after a latency that grows with
//! the audio's length — whole, in the asked format, or streamed as transcript events. The
//! transcription is the session's whose marker it carries.

use crate::serve::app::App;
use crate::serve::errors::refuse_as;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use wire::audio::transcription::{self, TranscriptionAsk, MAX_FILE_BYTES};
use wire::{Api, ErrorKind, WireError};

/// The form read: its fields and its file (name, content type, bytes).
struct Form {
    fields: Vec<(String, String)>,
    file: Option<(String, String, Bytes)>,
}

pub async fn handle(app: Arc<App>, headers: HeaderMap, b: Body) -> Response {
    app.stats.requests.fetch_add(1, Relaxed);
    let request_id = format!("req_stt_{:016x}", app.stats.requests.load(Relaxed));
    let refused =
        |e: &WireError| refuse_as(&app, "transcription", Api::ChatCompletions, e, &request_id);
    let form = match read_form(&headers, b).await {
        Ok(f) => f,
        Err(e) => return refused(&e),
    };
    let start = Instant::now();
    let (ask, file) = match understand(&form) {
        Ok(x) => x,
        Err(e) => return refused(&e),
    };
    let decoded = super::off_clock(&app, move || {
        // A decoder's panic on a malformed file is that file's refusal, not the mock's end.
        let decode = std::panic::AssertUnwindSafe(|| decode(&file.0, &file.1, &file.2));
        std::panic::catch_unwind(decode).unwrap_or_else(|_| {
            Err(WireError::invalid(
                "file",
                "could not be decoded: the decoder failed on it",
            ))
        })
    })
    .await;
    let (samples, rate) = match decoded.unwrap_or_else(|| {
        Err(WireError::invalid(
            "file",
            "could not be decoded: the mock is stopping",
        ))
    }) {
        Ok((x, _)) if x.is_empty() => {
            return refused(&WireError::invalid("file", "holds no audio"))
        }
        Ok(x) => x,
        Err(e) => return refused(&e),
    };
    if app.scenario.model(&ask.model).is_none() {
        return refused(&app.unknown_model(&ask.model));
    }
    let seconds = samples.len() as f64 / rate.max(1) as f64;
    let heard = super::off_clock(&app, move || voice::hear_all(&samples, rate))
        .await
        .unwrap_or_default();
    let text = heard
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let latency = app.scenario.audio.stt_latency_ms(seconds);
    let session = crate::session::markers(&text)
        .into_iter()
        .next()
        .map_or(crate::ledger::ANONYMOUS.to_string(), |m| m.session);
    app.ledger.voice(&session, |v| {
        v.stt_calls += 1;
        v.stt_ms += latency;
        v.heard_s += seconds;
        v.unheard += u64::from(heard.is_empty());
    });
    let deadline = start + Duration::from_secs_f64(latency / 1000.0);
    let mut resp = if ask.stream {
        streamed(&app, &ask, &text, seconds, (start, latency))
    } else {
        tokio::time::sleep_until(deadline).await;
        app.stats
            .record_audio_late(Instant::now().saturating_duration_since(deadline));
        let (ct, body) = ask.body(&text, seconds);
        let mut r = Response::new(Body::from(body));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
        r
    };
    crate::serve::headers::add_request_id(resp.headers_mut(), Api::ChatCompletions, &request_id);
    resp
}

/// The events of a streamed transcription: the first delta after the fixed latency, the
/// done event when the whole latency has passed, the deltas between.
fn streamed(
    app: &Arc<App>,
    ask: &TranscriptionAsk,
    text: &str,
    seconds: f64,
    (start, latency): (Instant, f64),
) -> Response {
    let events = ask.events(text, seconds);
    let first = app.scenario.audio.stt_ms.min(latency);
    let n = events.len().max(2) - 1;
    let frames = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let ms = first + (latency - first) * i as f64 / n as f64;
            (Duration::from_secs_f64(ms / 1000.0), Bytes::from(e))
        })
        .collect();
    let mut r = Response::new(super::stream::body(super::stream::Paced {
        app: app.clone(),
        start,
        frames,
    }));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    r
}

fn too_large(read: usize) -> WireError {
    WireError::new(
        ErrorKind::RequestTooLarge,
        format!("Maximum content size limit ({MAX_FILE_BYTES}) exceeded ({read} bytes read)"),
    )
}

/// The multipart form, read under the API's size limit.
async fn read_form(headers: &HeaderMap, b: Body) -> Result<Form, WireError> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let boundary = multer::parse_boundary(ct).map_err(|_| {
        WireError::invalid(
            "body",
            "must be multipart/form-data with a boundary (the file and the fields)",
        )
    })?;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(n) = declared.filter(|n| *n > MAX_FILE_BYTES + (1 << 20)) {
        return Err(too_large(n));
    }
    let limits = multer::Constraints::new().size_limit(
        multer::SizeLimit::new()
            .whole_stream((MAX_FILE_BYTES + (1 << 20)) as u64)
            .per_field(MAX_FILE_BYTES as u64),
    );
    let mut mp = multer::Multipart::with_constraints(b.into_data_stream(), boundary, limits);
    let mut form = Form {
        fields: Vec::new(),
        file: None,
    };
    let bad = |e: multer::Error| match e {
        multer::Error::StreamSizeExceeded { limit }
        | multer::Error::FieldSizeExceeded { limit, .. } => too_large(limit as usize),
        e => WireError::invalid(
            "body",
            format!("could not be read as multipart/form-data: {e}"),
        ),
    };
    while let Some(field) = mp.next_field().await.map_err(bad)? {
        let name = field.name().unwrap_or_default().to_string();
        match field.file_name().map(String::from) {
            Some(file_name) if name == "file" => {
                let ct = field
                    .content_type()
                    .map(|m| m.to_string())
                    .unwrap_or_default();
                form.file = Some((file_name, ct, field.bytes().await.map_err(bad)?));
            }
            _ => {
                let value = field.text().await.map_err(bad)?;
                form.fields.push((name, value));
            }
        }
    }
    Ok(form)
}

/// What the form asks, and its file (name, content type, bytes).
fn understand(form: &Form) -> Result<(TranscriptionAsk, (String, String, Bytes)), WireError> {
    let Some(file) = &form.file else {
        return Err(WireError::invalid(
            "file",
            "is required (the audio, as a multipart file)",
        ));
    };
    Ok((transcription::parse(&form.fields)?, file.clone()))
}

/// A file's audio: a WAV by its header; raw PCM (`.pcm`, `audio/pcm`: 16-bit at 24 kHz);
/// raw µ-law (`.ulaw`, `.mulaw`, `audio/basic`: 8 kHz); else a container `upload` reads,
/// found by its bytes.
fn decode(name: &str, ct: &str, bytes: &[u8]) -> Result<(Vec<f32>, u32), WireError> {
    let ext = name
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if bytes.starts_with(b"RIFF") {
        return voice::pcm::read_wav(bytes)
            .map_err(|e| WireError::invalid("file", format!("{e}: send a complete WAV file")));
    }
    match (ext.as_str(), ct) {
        ("pcm" | "raw", _) | (_, "audio/pcm" | "audio/l16") => Ok((voice::pcm::from_s16le(bytes), 24000)),
        ("ulaw" | "mulaw" | "ul", _) | (_, "audio/basic" | "audio/pcmu" | "audio/x-mulaw") => {
            Ok((voice::pcm::from_ulaw(bytes), 8000))
        }
        _ => super::upload::decode(&ext, bytes).map_err(|why| {
            WireError::invalid(
                "file",
                format!(
                    "Invalid file format: {name:?} is not audio this mock reads: {why}. Supported: wav (PCM, µ-law, A-law), pcm (16-bit, 24 kHz), ulaw (8 kHz), {}",
                    super::upload::READ
                ),
            )
        }),
    }
}
