//! `POST /v1/audio/speech`: the request as the SDKs send it (model, input, voice,
//! instructions, response_format, speed, stream_format), checked as the API checks it,
//! and the SSE events of `stream_format: "sse"` (`speech.audio.delta` with base64 audio,
//! `speech.audio.done` with usage). The mock produces every format the API names but
//! `aac`: `mp3` (the API's default: 24 kHz mono), `opus` (Ogg Opus), `flac`, `pcm` (24 kHz
//! 16-bit mono, no header) and `wav` (the same in a RIFF header); `aac`, or any other, is
//! refused with a 400 that names those five — never a body in the wrong format.

use crate::error::WireError;
use base64::Engine;
use serde_json::{json, Value};

/// The rate every OpenAI TTS format carries.
pub const RATE: u32 = 24_000;
/// The longest `input` the API takes.
pub const MAX_INPUT_CHARS: usize = 4096;

/// The formats the mock produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpeechFormat {
    /// MPEG-2 Layer III at 24 kHz, mono: the API's default.
    Mp3,
    /// Headerless 16-bit little-endian mono at 24 kHz.
    Pcm,
    /// The same in a RIFF WAVE header.
    Wav,
    /// Opus in an Ogg stream (RFC 7845), mono, its input rate 24 kHz.
    Opus,
    /// FLAC, 16-bit mono at 24 kHz.
    Flac,
}

impl SpeechFormat {
    pub fn content_type(self) -> &'static str {
        match self {
            SpeechFormat::Mp3 => "audio/mpeg",
            SpeechFormat::Pcm => "audio/pcm",
            SpeechFormat::Wav => "audio/wav",
            SpeechFormat::Opus => "audio/opus",
            SpeechFormat::Flac => "audio/flac",
        }
    }
}

/// A speech request, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeechRequest {
    pub model: String,
    pub input: String,
    pub voice: String,
    pub instructions: Option<String>,
    pub format: SpeechFormat,
    pub speed: f64,
    /// `stream_format: "sse"`: events instead of raw audio.
    pub sse: bool,
}

/// Reads a speech request's JSON body as the API does; a field it refuses names itself.
pub fn parse(bytes: &[u8]) -> Result<SpeechRequest, WireError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        WireError::invalid(
            "body",
            format!("is not valid JSON ({e}); send a JSON object"),
        )
    })?;
    let Some(o) = v.as_object() else {
        return Err(WireError::invalid("body", "must be a JSON object"));
    };
    let text = |k: &str| -> Result<String, WireError> {
        match o.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(WireError::invalid(k, "must be a string")),
            None => Err(WireError::invalid(k, "is required")),
        }
    };
    let model = text("model")?;
    let input = text("input")?;
    if input.chars().count() > MAX_INPUT_CHARS {
        return Err(WireError::invalid(
            "input",
            format!("is longer than {MAX_INPUT_CHARS} characters"),
        ));
    }
    let voice = match o.get("voice") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(m)) if m.get("id").is_some_and(Value::is_string) => {
            m["id"].as_str().unwrap_or_default().to_string()
        }
        Some(_) => {
            return Err(WireError::invalid(
                "voice",
                "must be a voice name or {\"id\": …}",
            ))
        }
        None => return Err(WireError::invalid("voice", "is required")),
    };
    let format = format_of(o.get("response_format").and_then(Value::as_str))?;
    let speed = match o.get("speed") {
        None => 1.0,
        Some(s) => s
            .as_f64()
            .filter(|s| (0.25..=4.0).contains(s))
            .ok_or_else(|| WireError::invalid("speed", "must be a number from 0.25 to 4.0"))?,
    };
    let sse = match o.get("stream_format").and_then(Value::as_str) {
        None | Some("audio") => false,
        Some("sse") => true,
        Some(other) => {
            return Err(WireError::invalid(
                "stream_format",
                format!("{other:?} is not one of \"sse\", \"audio\""),
            ))
        }
    };
    Ok(SpeechRequest {
        model,
        input,
        voice,
        instructions: o
            .get("instructions")
            .and_then(Value::as_str)
            .map(String::from),
        format,
        speed,
        sse,
    })
}

/// `response_format` read as the API reads it: mp3 where it is absent.
fn format_of(asked: Option<&str>) -> Result<SpeechFormat, WireError> {
    Ok(match asked.unwrap_or("mp3") {
        "mp3" => SpeechFormat::Mp3,
        "pcm" => SpeechFormat::Pcm,
        "wav" => SpeechFormat::Wav,
        "opus" => SpeechFormat::Opus,
        "flac" => SpeechFormat::Flac,
        other => {
            // AAC: the one encoder fit to make it (Fraunhofer's FDK) is C++ the mock would
            // build for a format no voice framework asks for by default.
            let why = if other == "aac" {
                " (it has no AAC encoder)"
            } else {
                ""
            };
            return Err(WireError::invalid(
                "response_format",
                format!("{other:?} is not produced by this mock{why}; it produces \"mp3\" (the default), \"opus\" (Ogg), \"flac\", \"pcm\" (24 kHz 16-bit mono) and \"wav\": ask for one of them"),
            ));
        }
    })
}

/// One `speech.audio.delta` event: audio bytes of the response format, base64.
pub fn delta_event(audio: &[u8]) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(audio);
    let mut out = Vec::with_capacity(b64.len() + 64);
    out.extend_from_slice(b"data: {\"type\":\"speech.audio.delta\",\"audio\":\"");
    out.extend_from_slice(b64.as_bytes());
    out.extend_from_slice(b"\"}\n\n");
    out
}

/// The closing `speech.audio.done` event, with usage: the input's text tokens, the
/// output's audio tokens.
pub fn done_event(input_tokens: u32, output_tokens: u32) -> Vec<u8> {
    let v = json!({
        "type": "speech.audio.done",
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        }
    });
    let mut out = Vec::new();
    crate::sse::data(&mut out, v.to_string().as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_but_aac_is_read_and_others_are_refused_by_name() {
        for (name, f, ct) in [
            ("opus", SpeechFormat::Opus, "audio/opus"),
            ("flac", SpeechFormat::Flac, "audio/flac"),
            ("wav", SpeechFormat::Wav, "audio/wav"),
        ] {
            let body = format!(
                r#"{{"model":"tts-1","input":"hi","voice":"alloy","response_format":"{name}"}}"#
            );
            let r = parse(body.as_bytes()).unwrap();
            assert_eq!((r.format, r.format.content_type()), (f, ct));
        }
        let r = parse(br#"{"model":"gpt-4o-mini-tts","input":"hi","voice":"alloy","response_format":"pcm","stream_format":"sse"}"#).unwrap();
        assert_eq!((r.format, r.sse, r.speed), (SpeechFormat::Pcm, true, 1.0));
        let r = parse(br#"{"model":"tts-1","input":"hi","voice":"alloy"}"#).unwrap();
        assert_eq!(r.format, SpeechFormat::Mp3, "mp3 is the default");
        assert_eq!(r.format.content_type(), "audio/mpeg");
        let e = parse(br#"{"model":"tts-1","input":"hi","voice":"alloy","response_format":"aac"}"#)
            .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("response_format"));
        assert!(
            e.message.contains(
                "\"aac\" is not produced by this mock (it has no AAC encoder); it produces \"mp3\" (the default), \"opus\" (Ogg), \"flac\", \"pcm\""
            ),
            "{}",
            e.message
        );
        let e = parse(br#"{"model":"tts-1","voice":"alloy","response_format":"wav"}"#).unwrap_err();
        assert_eq!(e.message, "input: is required");
        let e = parse(
            br#"{"model":"tts-1","input":"x","voice":"a","response_format":"wav","speed":9}"#,
        )
        .unwrap_err();
        assert_eq!(e.param.as_deref(), Some("speed"));
        let voice =
            parse(br#"{"model":"m","input":"x","voice":{"id":"voice_1"},"response_format":"wav"}"#)
                .unwrap();
        assert_eq!(voice.voice, "voice_1");
    }

    #[test]
    fn the_events_are_one_data_line_each() {
        let d = String::from_utf8(delta_event(&[1, 2, 3])).unwrap();
        assert_eq!(
            d,
            "data: {\"type\":\"speech.audio.delta\",\"audio\":\"AQID\"}\n\n"
        );
        let done: Value = serde_json::from_str(
            String::from_utf8(done_event(4, 20))
                .unwrap()
                .trim_start_matches("data: ")
                .trim(),
        )
        .unwrap();
        assert_eq!(done["usage"]["total_tokens"], 24);
    }
}
