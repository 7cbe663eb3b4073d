//! `POST /v1/audio/transcriptions`: the multipart fields beside the file (model,
//! response_format, stream, language, prompt, temperature, include[],
//! timestamp_granularities[]), checked as the API checks them, and the answer in each
//! response format — `json` with its usage, `text`, `verbose_json` with segments and words,
//! `srt`, `vtt` — or streamed as `transcript.text.delta` / `transcript.text.done` events.
//! Usage as the API reports it: tokens for the gpt-4o transcribe models (audio tokens in,
//! text tokens out), seconds for whisper-1. Reading the multipart body and hearing the
//! audio are the mock's and the voice's.

use crate::error::WireError;
use serde_json::{json, Value};

/// The largest file the API takes (25 MB).
pub const MAX_FILE_BYTES: usize = 25 * 1024 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseFormat {
    Json,
    Text,
    VerboseJson,
    Srt,
    Vtt,
}

/// What a transcription asks besides its file.
#[derive(Clone, Debug, PartialEq)]
pub struct TranscriptionAsk {
    pub model: String,
    pub format: ResponseFormat,
    /// Streamed events (the gpt-4o transcribe models; whisper-1 ignores it).
    pub stream: bool,
    pub language: Option<String>,
}

/// Reads the fields of a transcription's form (the file excluded), as name and value.
pub fn parse(fields: &[(String, String)]) -> Result<TranscriptionAsk, WireError> {
    let get = |k: &str| {
        fields
            .iter()
            .find(|(n, _)| n == k || n.strip_suffix("[]") == Some(k))
            .map(|(_, v)| v.as_str())
    };
    let model = get("model")
        .filter(|m| !m.is_empty())
        .ok_or_else(|| WireError::invalid("model", "is required"))?
        .to_string();
    let format = match get("response_format").unwrap_or("json") {
        "json" => ResponseFormat::Json,
        "text" => ResponseFormat::Text,
        "verbose_json" => ResponseFormat::VerboseJson,
        "srt" => ResponseFormat::Srt,
        "vtt" => ResponseFormat::Vtt,
        other => {
            return Err(WireError::invalid(
                "response_format",
                format!("{other:?} is not one of json, text, verbose_json, srt, vtt"),
            ))
        }
    };
    let stream = match get("stream") {
        None | Some("false") | Some("False") | Some("0") => false,
        Some("true") | Some("True") | Some("1") => true,
        Some(other) => {
            return Err(WireError::invalid(
                "stream",
                format!("{other:?} is not a boolean"),
            ))
        }
    };
    if let Some(t) = get("temperature") {
        if !t.parse::<f64>().is_ok_and(|t| (0.0..=1.0).contains(&t)) {
            return Err(WireError::invalid(
                "temperature",
                "must be a number from 0 to 1",
            ));
        }
    }
    let whisper = model.starts_with("whisper");
    Ok(TranscriptionAsk {
        stream: stream && !whisper && format == ResponseFormat::Json,
        format,
        language: get("language").map(String::from),
        model,
    })
}

impl TranscriptionAsk {
    /// whisper-1 bills by the second; the gpt-4o transcribe models by the token.
    fn usage(&self, seconds: f64, text_tokens: u32) -> Value {
        if self.model.starts_with("whisper") {
            return json!({"type": "duration", "seconds": seconds.ceil()});
        }
        let audio = super::audio_tokens(seconds, super::INPUT_AUDIO_TOKENS_PER_S);
        json!({
            "type": "tokens",
            "input_tokens": audio,
            "input_token_details": {"text_tokens": 0, "audio_tokens": audio},
            "output_tokens": text_tokens,
            "total_tokens": audio + text_tokens,
        })
    }

    /// The whole answer in the asked format: (content type, body).
    pub fn body(&self, text: &str, seconds: f64) -> (&'static str, Vec<u8>) {
        let tokens = crate::count_tokens(text);
        match self.format {
            ResponseFormat::Json => (
                "application/json",
                json!({"text": text, "usage": self.usage(seconds, tokens)})
                    .to_string()
                    .into_bytes(),
            ),
            ResponseFormat::Text => ("text/plain; charset=utf-8", text.as_bytes().to_vec()),
            ResponseFormat::VerboseJson => ("application/json", self.verbose(text, seconds)),
            ResponseFormat::Srt => ("text/plain; charset=utf-8", cue(text, seconds, false)),
            ResponseFormat::Vtt => ("text/vtt; charset=utf-8", cue(text, seconds, true)),
        }
    }

    /// `verbose_json`: the task, language, duration, one segment and the words spread
    /// evenly over the audio.
    fn verbose(&self, text: &str, seconds: f64) -> Vec<u8> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let step = seconds / words.len().max(1) as f64;
        let round = |x: f64| (x * 100.0).round() / 100.0;
        let timed: Vec<Value> = words
            .iter()
            .enumerate()
            .map(|(i, w)| json!({"word": w, "start": round(i as f64 * step), "end": round((i + 1) as f64 * step)}))
            .collect();
        json!({
            "task": "transcribe",
            "language": self.language.as_deref().map_or("english", language_name),
            "duration": round(seconds),
            "text": text,
            "segments": [{
                "id": 0, "seek": 0, "start": 0.0, "end": round(seconds), "text": text,
                "tokens": [], "temperature": 0.0, "avg_logprob": -0.1,
                "compression_ratio": 1.0, "no_speech_prob": 0.0
            }],
            "words": timed,
            "usage": {"type": "duration", "seconds": seconds.ceil()},
        })
        .to_string()
        .into_bytes()
    }

    /// The streamed answer: a `transcript.text.delta` per word, then `transcript.text.done`
    /// with the whole text and usage.
    pub fn events(&self, text: &str, seconds: f64) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for w in text.split_inclusive(' ') {
            let mut e = Vec::new();
            crate::sse::data(
                &mut e,
                json!({"type": "transcript.text.delta", "delta": w})
                    .to_string()
                    .as_bytes(),
            );
            out.push(e);
        }
        let mut done = Vec::new();
        let usage = self.usage(seconds, crate::count_tokens(text));
        crate::sse::data(
            &mut done,
            json!({"type": "transcript.text.done", "text": text, "usage": usage})
                .to_string()
                .as_bytes(),
        );
        out.push(done);
        out
    }
}

/// An ISO-639-1 code as the API names the language in `verbose_json`.
fn language_name(code: &str) -> &str {
    match code {
        "en" => "english",
        "de" => "german",
        "fr" => "french",
        "es" => "spanish",
        other => other,
    }
}

/// One cue over the whole audio: SubRip, or WebVTT.
fn cue(text: &str, seconds: f64, vtt: bool) -> Vec<u8> {
    let at = |s: f64| {
        let ms = (s * 1000.0).round() as u64;
        let (h, m, sec, milli) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
        match vtt {
            true => format!("{h:02}:{m:02}:{sec:02}.{milli:03}"),
            false => format!("{h:02}:{m:02}:{sec:02},{milli:03}"),
        }
    };
    match vtt {
        true => format!("WEBVTT\n\n{} --> {}\n{text}\n", at(0.0), at(seconds)).into_bytes(),
        false => format!("1\n{} --> {}\n{text}\n\n", at(0.0), at(seconds)).into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(fields: &[(&str, &str)]) -> Result<TranscriptionAsk, WireError> {
        let f: Vec<(String, String)> = fields
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        parse(&f)
    }

    #[test]
    fn fields_are_read_as_the_api_reads_them() {
        let a = ask(&[("model", "gpt-4o-transcribe"), ("stream", "true")]).unwrap();
        assert!(a.stream);
        // whisper-1 ignores stream and answers whole.
        assert!(
            !ask(&[("model", "whisper-1"), ("stream", "true")])
                .unwrap()
                .stream
        );
        assert_eq!(ask(&[]).unwrap_err().message, "model: is required");
        assert_eq!(
            ask(&[("model", "m"), ("response_format", "mp3")])
                .unwrap_err()
                .param
                .as_deref(),
            Some("response_format")
        );
    }

    #[test]
    fn each_format_answers_in_its_shape() {
        let a = ask(&[("model", "gpt-4o-transcribe")]).unwrap();
        let (ct, body) = a.body("hello there", 2.05);
        assert_eq!(ct, "application/json");
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["text"], "hello there");
        assert_eq!(v["usage"]["input_token_details"]["audio_tokens"], 21);
        let w = ask(&[("model", "whisper-1"), ("response_format", "verbose_json")]).unwrap();
        let v: Value = serde_json::from_slice(&w.body("a b", 1.0).1).unwrap();
        assert_eq!(
            (v["duration"].as_f64(), v["words"][1]["start"].as_f64()),
            (Some(1.0), Some(0.5))
        );
        let srt = ask(&[("model", "whisper-1"), ("response_format", "srt")]).unwrap();
        assert_eq!(
            String::from_utf8(srt.body("hi", 1.5).1).unwrap(),
            "1\n00:00:00,000 --> 00:00:01,500\nhi\n\n"
        );
        let e = a.events("one two", 1.0);
        assert_eq!(e.len(), 3);
        assert!(String::from_utf8_lossy(&e[2]).contains("\"transcript.text.done\""));
    }
}
