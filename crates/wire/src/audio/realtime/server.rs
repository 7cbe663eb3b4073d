//! The server's events, written as the GA Realtime API writes them: every one with its own
//! `event_id` (`event_1`, `event_2` … per connection), the ids of the response, item,
//! output and content it belongs to, and `response.done` with the usage the API reports
//! (text and audio tokens, in and out). Pipecat's Realtime service validates these
//! strictly, so no required field is ever left out.

use super::items::Item;
use super::session::Session;
use crate::error::WireError;
use serde_json::{json, Value};

/// Writes one connection's events, numbering them.
#[derive(Debug, Default)]
pub struct Events {
    next: u64,
}

/// Where a response's output goes: its id, the output item, its index.
#[derive(Clone, Debug, PartialEq)]
pub struct Out {
    pub response_id: String,
    pub item_id: String,
    pub output_index: u32,
}

/// A response's token usage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    pub input_text: u32,
    pub input_audio: u32,
    pub output_text: u32,
    pub output_audio: u32,
}

impl Events {
    fn id(&mut self) -> String {
        self.next += 1;
        format!("event_{}", self.next)
    }

    fn write(&mut self, kind: &str, mut fields: Value) -> String {
        fields["type"] = json!(kind);
        fields["event_id"] = json!(self.id());
        fields.to_string()
    }

    pub fn session(&mut self, kind: &str, s: &Session, expires_at: u64) -> String {
        self.write(kind, json!({"session": s.to_json(expires_at)}))
    }

    /// An `error` event: the client's event it answers, when it had an id.
    pub fn error(&mut self, e: &WireError, answering: Option<&str>) -> String {
        let code = match e.code {
            crate::Code::Is(c) => json!(c),
            _ => Value::Null,
        };
        let kind = match e.kind {
            crate::ErrorKind::RateLimit | crate::ErrorKind::TokenRateLimit => "rate_limit_error",
            crate::ErrorKind::Server | crate::ErrorKind::Overloaded => "server_error",
            _ => "invalid_request_error",
        };
        self.write("error", json!({"error": {"type": kind, "code": code, "message": e.message, "param": e.param, "event_id": answering}}))
    }

    pub fn speech_started(&mut self, audio_start_ms: u64, item_id: &str) -> String {
        self.write(
            "input_audio_buffer.speech_started",
            json!({"audio_start_ms": audio_start_ms, "item_id": item_id}),
        )
    }

    pub fn speech_stopped(&mut self, audio_end_ms: u64, item_id: &str) -> String {
        self.write(
            "input_audio_buffer.speech_stopped",
            json!({"audio_end_ms": audio_end_ms, "item_id": item_id}),
        )
    }

    pub fn committed(&mut self, item_id: &str, previous: Option<&str>) -> String {
        self.write(
            "input_audio_buffer.committed",
            json!({"item_id": item_id, "previous_item_id": previous}),
        )
    }

    pub fn cleared(&mut self) -> String {
        self.write("input_audio_buffer.cleared", json!({}))
    }

    /// `conversation.item.added` or `conversation.item.done`.
    pub fn item(
        &mut self,
        kind: &str,
        item: &Item,
        status: &str,
        previous: Option<&str>,
    ) -> String {
        self.write(
            kind,
            json!({"item": item.to_json(status), "previous_item_id": previous}),
        )
    }

    pub fn item_deleted(&mut self, item_id: &str) -> String {
        self.write("conversation.item.deleted", json!({"item_id": item_id}))
    }

    pub fn item_truncated(&mut self, item_id: &str, audio_end_ms: u64) -> String {
        self.write(
            "conversation.item.truncated",
            json!({"item_id": item_id, "content_index": 0, "audio_end_ms": audio_end_ms}),
        )
    }

    /// The caller's words as the server heard them.
    pub fn transcription_completed(
        &mut self,
        item_id: &str,
        transcript: &str,
        seconds: f64,
    ) -> String {
        let audio = crate::audio::audio_tokens(seconds, crate::audio::INPUT_AUDIO_TOKENS_PER_S);
        let text = crate::count_tokens(transcript);
        self.write("conversation.item.input_audio_transcription.completed", json!({
            "item_id": item_id, "content_index": 0, "transcript": transcript,
            "usage": {"type": "tokens", "input_tokens": audio, "input_token_details": {"text_tokens": 0, "audio_tokens": audio},
                      "output_tokens": text, "total_tokens": audio + text}}))
    }

    /// `response.created` (status in_progress) for a response of `s`.
    pub fn response_created(&mut self, response_id: &str, s: &Session) -> String {
        let r = response(response_id, s, "in_progress", None, &[], None);
        self.write("response.created", json!({"response": r}))
    }

    pub fn output_item(&mut self, kind: &str, out: &Out, item: &Item, status: &str) -> String {
        self.write(kind, json!({"response_id": out.response_id, "output_index": out.output_index, "item": item.to_json(status)}))
    }

    /// `response.content_part.added` / `.done`: an audio part (with its transcript) or text.
    pub fn content_part(&mut self, kind: &str, out: &Out, audio: bool, text: &str) -> String {
        let part = match audio {
            true => json!({"type": "audio", "transcript": text}),
            false => json!({"type": "text", "text": text}),
        };
        self.write(kind, json!({"response_id": out.response_id, "item_id": out.item_id, "output_index": out.output_index, "content_index": 0, "part": part}))
    }

    /// A piece of output: `response.output_audio.delta` (base64 audio),
    /// `response.output_audio_transcript.delta` or `response.output_text.delta`.
    pub fn delta(&mut self, kind: &str, out: &Out, delta: &str) -> String {
        self.write(kind, json!({"response_id": out.response_id, "item_id": out.item_id, "output_index": out.output_index, "content_index": 0, "delta": delta}))
    }

    /// `response.output_audio.done`, or a transcript's or text's `.done` with the whole of it.
    pub fn part_done(&mut self, kind: &str, out: &Out, field: Option<(&str, &str)>) -> String {
        let mut v = json!({"response_id": out.response_id, "item_id": out.item_id, "output_index": out.output_index, "content_index": 0});
        if let Some((k, text)) = field {
            v[k] = json!(text);
        }
        self.write(kind, v)
    }

    pub fn arguments_delta(&mut self, out: &Out, call_id: &str, delta: &str) -> String {
        self.write("response.function_call_arguments.delta", json!({"response_id": out.response_id, "item_id": out.item_id, "output_index": out.output_index, "call_id": call_id, "delta": delta}))
    }

    pub fn arguments_done(
        &mut self,
        out: &Out,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> String {
        self.write("response.function_call_arguments.done", json!({"response_id": out.response_id, "item_id": out.item_id, "output_index": out.output_index, "call_id": call_id, "name": name, "arguments": arguments}))
    }

    /// `response.done`: completed, or cancelled with why ("turn_detected",
    /// "client_cancelled").
    pub fn response_done(
        &mut self,
        id: &str,
        s: &Session,
        output: &[Item],
        cancelled: Option<&str>,
        usage: Usage,
    ) -> String {
        let status = if cancelled.is_some() {
            "cancelled"
        } else {
            "completed"
        };
        let r = response(id, s, status, cancelled, output, Some(usage));
        self.write("response.done", json!({"response": r}))
    }

    pub fn rate_limits(&mut self, requests_left: u64, tokens_left: u64) -> String {
        self.write("rate_limits.updated", json!({"rate_limits": [
            {"name": "requests", "limit": 10000, "remaining": requests_left, "reset_seconds": 60},
            {"name": "tokens", "limit": 2_000_000, "remaining": tokens_left, "reset_seconds": 60}]}))
    }
}

/// A response object, as `response.created` and `response.done` carry it.
fn response(
    id: &str,
    s: &Session,
    status: &str,
    cancelled: Option<&str>,
    output: &[Item],
    usage: Option<Usage>,
) -> Value {
    let usage = usage.map(|u| {
        let input = u.input_text + u.input_audio;
        let out = u.output_text + u.output_audio;
        json!({"total_tokens": input + out, "input_tokens": input, "output_tokens": out,
            "input_token_details": {"text_tokens": u.input_text, "audio_tokens": u.input_audio, "image_tokens": 0, "cached_tokens": 0,
                "cached_tokens_details": {"text_tokens": 0, "audio_tokens": 0, "image_tokens": 0}},
            "output_token_details": {"text_tokens": u.output_text, "audio_tokens": u.output_audio}})
    });
    json!({
        "object": "realtime.response", "id": id, "status": status,
        "status_details": cancelled.map(|why| json!({"type": "cancelled", "reason": why})),
        "output": output.iter().map(|i| i.to_json("completed")).collect::<Vec<_>>(),
        "conversation_id": format!("conv_{}", s.id.trim_start_matches("sess_")),
        "output_modalities": [if s.audio_out { "audio" } else { "text" }],
        "max_output_tokens": s.max_output_tokens.map_or(json!("inf"), |n| json!(n)),
        "audio": {"output": {"format": {"type": match s.output_format {
            super::AudioFormat::Pcm24 => "audio/pcm", super::AudioFormat::Pcmu => "audio/pcmu", super::AudioFormat::Pcma => "audio/pcma" }}, "voice": s.voice}},
        "usage": usage, "metadata": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_has_its_id_and_type_and_the_fields_pipecat_requires() {
        let mut e = Events::default();
        let s = Session::new("sess_1".into(), "gpt-realtime".into());
        let created: Value = serde_json::from_str(&e.session("session.created", &s, 9)).unwrap();
        assert_eq!(
            (created["event_id"].as_str(), created["type"].as_str()),
            (Some("event_1"), Some("session.created"))
        );
        let out = Out {
            response_id: "resp_1".into(),
            item_id: "item_2".into(),
            output_index: 0,
        };
        let d: Value =
            serde_json::from_str(&e.delta("response.output_audio.delta", &out, "AAA=")).unwrap();
        for k in [
            "response_id",
            "item_id",
            "output_index",
            "content_index",
            "delta",
            "event_id",
        ] {
            assert!(d.get(k).is_some(), "{k} in {d}");
        }
        let done: Value = serde_json::from_str(&e.response_done(
            "resp_1",
            &s,
            &[],
            Some("turn_detected"),
            Usage {
                input_audio: 10,
                output_audio: 20,
                ..Default::default()
            },
        ))
        .unwrap();
        assert_eq!(done["response"]["status"], "cancelled");
        assert_eq!(
            done["response"]["usage"]["output_token_details"]["audio_tokens"],
            20
        );
        let err: Value =
            serde_json::from_str(&e.error(&WireError::invalid("audio", "bad"), Some("c1")))
                .unwrap();
        assert_eq!(
            (
                err["error"]["type"].as_str(),
                err["error"]["event_id"].as_str()
            ),
            (Some("invalid_request_error"), Some("c1"))
        );
    }
}
