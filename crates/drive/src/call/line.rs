//! The line a call runs over, as the phone network or the browser speaks it. Twilio Media
//! Streams: Plimsoll plays Twilio — `connected`, `start` (streamSid, callSid,
//! customParameters, µ-law at 8 kHz), a `media` event every frame, `mark` returned when
//! the audio before it has played, `stop` — and reads the bot's `media`, `mark` and
//! `clear`. Raw PCM: binary frames of 16-bit little-endian samples both ways. What the
//! frames carry and when is the call's business.

use crate::spec::voice::Line;
use base64::Engine;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

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

/// One call's end of the line.
pub(crate) struct LineIo {
    pub line: Line,
    stream_sid: String,
    call_sid: String,
    account_sid: String,
    seq: u64,
    chunk: u64,
}

fn sid(prefix: &str, seed: u64) -> String {
    let a = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let b = a.rotate_left(17) ^ 0xD1B5_4A32_D192_ED03;
    format!("{prefix}{a:016x}{b:016x}")
}

impl LineIo {
    pub fn new(line: Line, seed: u64) -> LineIo {
        LineIo {
            line,
            stream_sid: sid("MZ", seed),
            call_sid: sid("CA", seed ^ 1),
            account_sid: sid("AC", 7),
            seq: 0,
            chunk: 0,
        }
    }

    fn next_seq(&mut self) -> String {
        self.seq += 1;
        self.seq.to_string()
    }

    /// What opens the call: Twilio's `connected` and `start`; nothing on raw PCM.
    pub fn opening(&mut self, custom: &[(String, String)]) -> Vec<Message> {
        if self.line != Line::Twilio {
            return Vec::new();
        }
        let params: serde_json::Map<String, Value> =
            custom.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let start = json!({"event": "start", "sequenceNumber": self.next_seq(), "streamSid": self.stream_sid,
            "start": {"accountSid": self.account_sid, "streamSid": self.stream_sid, "callSid": self.call_sid,
                "tracks": ["inbound"], "customParameters": params,
                "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}});
        vec![
            Message::text(
                json!({"event": "connected", "protocol": "Call", "version": "1.0.0"}).to_string(),
            ),
            Message::text(start.to_string()),
        ]
    }

    /// One frame of the caller's audio, `at_ms` after the call began.
    pub fn frame(&mut self, samples: &[f32], at_ms: u64) -> Message {
        match self.line {
            // A WebRTC call's frames are its peer's to encode (`wire`), never a message.
            Line::Pcm { .. } | Line::WebRtc(_) => Message::binary(voice::pcm::to_s16le(samples)),
            Line::Twilio => {
                self.chunk += 1;
                let payload =
                    base64::engine::general_purpose::STANDARD.encode(voice::pcm::to_ulaw(samples));
                let seq = self.next_seq();
                Message::text(format!(
                    r#"{{"event":"media","sequenceNumber":"{seq}","media":{{"track":"inbound","chunk":"{}","timestamp":"{at_ms}","payload":"{payload}"}},"streamSid":"{}"}}"#,
                    self.chunk, self.stream_sid
                ))
            }
        }
    }

    /// A mark returned: the audio before it has played (Twilio only).
    pub fn mark(&mut self, name: &str) -> Option<Message> {
        (self.line == Line::Twilio).then(|| {
            Message::text(json!({"event": "mark", "sequenceNumber": self.next_seq(), "streamSid": self.stream_sid, "mark": {"name": name}}).to_string())
        })
    }

    /// What ends the call: Twilio's `stop`.
    pub fn stop(&mut self) -> Option<Message> {
        (self.line == Line::Twilio).then(|| {
            Message::text(json!({"event": "stop", "sequenceNumber": self.next_seq(), "streamSid": self.stream_sid,
                "stop": {"accountSid": self.account_sid, "callSid": self.call_sid}}).to_string())
        })
    }

    /// A message from the bot, read as the line reads it.
    pub fn read(&self, msg: &Message) -> Heard {
        match (self.line, msg) {
            (Line::Pcm { .. }, Message::Binary(b)) => Heard::Audio(voice::pcm::from_s16le(b)),
            (Line::Pcm { .. }, _) => Heard::Ignored,
            (Line::Twilio, Message::Text(t)) => twilio(t.as_str()),
            (Line::Twilio, Message::Binary(_)) => Heard::Bad(
                "a binary frame: Twilio Media Streams carries JSON text messages only".into(),
            ),
            _ => Heard::Ignored,
        }
    }
}

/// A Twilio message from the bot: `media`, `mark`, `clear`.
fn twilio(text: &str) -> Heard {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        let head: String = text.chars().take(60).collect();
        return Heard::Bad(format!("not JSON: {head:?}"));
    };
    match v["event"].as_str() {
        Some("media") => match v["media"]["payload"]
            .as_str()
            .map(|p| base64::engine::general_purpose::STANDARD.decode(p))
        {
            Some(Ok(b)) => Heard::Audio(voice::pcm::from_ulaw(&b)),
            Some(Err(e)) => Heard::Bad(format!("a media payload that is not base64 ({e})")),
            None => Heard::Bad("a media event without media.payload".into()),
        },
        Some("mark") => Heard::Mark(v["mark"]["name"].as_str().unwrap_or_default().to_string()),
        Some("clear") => Heard::Clear,
        Some(_) => Heard::Ignored,
        None => Heard::Bad(format!(
            "a message without \"event\": {}",
            &text[..text.len().min(60)]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twilio_events_are_written_and_read_as_twilio_does() {
        let mut l = LineIo::new(Line::Twilio, 3);
        let open = l.opening(&[("caller".into(), "s0".into())]);
        let start: Value = serde_json::from_str(open[1].to_text().unwrap()).unwrap();
        assert_eq!(start["start"]["mediaFormat"]["encoding"], "audio/x-mulaw");
        assert_eq!(start["start"]["customParameters"]["caller"], "s0");
        assert!(start["start"]["callSid"]
            .as_str()
            .unwrap()
            .starts_with("CA"));
        let media: Value =
            serde_json::from_str(l.frame(&[0.0; 160], 20).to_text().unwrap()).unwrap();
        assert_eq!(
            (
                media["media"]["chunk"].as_str(),
                media["media"]["timestamp"].as_str()
            ),
            (Some("1"), Some("20"))
        );
        assert_eq!(
            base64::engine::general_purpose::STANDARD
                .decode(media["media"]["payload"].as_str().unwrap())
                .unwrap()
                .len(),
            160
        );
        let bot = r#"{"event":"media","streamSid":"MZ1","media":{"payload":"/////w=="}}"#;
        assert_eq!(l.read(&Message::text(bot)), Heard::Audio(vec![0.0; 4]));
        assert_eq!(
            l.read(&Message::text(r#"{"event":"clear","streamSid":"MZ1"}"#)),
            Heard::Clear
        );
        assert!(
            matches!(l.read(&Message::text("garbage")), Heard::Bad(m) if m.starts_with("not JSON"))
        );
    }
}
