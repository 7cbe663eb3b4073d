//! Twilio Media Streams, as Twilio speaks them to a bot: Plimsoll plays Twilio —
//! `connected`, `start` (streamSid, callSid, customParameters, µ-law at 8 kHz), a `media`
//! event every frame, `mark` returned when the audio before it has played, `stop` — and
//! reads the bot's `media`, `mark` and `clear`.

use super::transport::{Dial, Heard, Transport};
use super::ws::Ws;
use crate::run::tally::Tally;
use crate::run::Failure;
use base64::Engine;
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// One call's end of a Twilio Media Stream.
pub(crate) struct Twilio {
    ws: Option<Ws>,
    stream_sid: String,
    call_sid: String,
    account_sid: String,
    seq: u64,
    chunk: u64,
    custom: Vec<(String, String)>,
}

fn sid(prefix: &str, seed: u64) -> String {
    let a = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let b = a.rotate_left(17) ^ 0xD1B5_4A32_D192_ED03;
    format!("{prefix}{a:016x}{b:016x}")
}

impl Twilio {
    /// A stream whose ids come from `seed` (the call's name), not yet dialled.
    fn new(seed: u64, custom: Vec<(String, String)>) -> Twilio {
        Twilio {
            ws: None,
            stream_sid: sid("MZ", seed),
            call_sid: sid("CA", seed ^ 1),
            account_sid: sid("AC", 7),
            seq: 0,
            chunk: 0,
            custom,
        }
    }

    /// Dials the bot.
    pub async fn place(d: &Dial<'_>, seed: u64) -> Result<Twilio, Failure> {
        let mut t = Twilio::new(seed, d.custom.clone());
        t.ws = Some(Ws::dial(d).await?);
        Ok(t)
    }

    fn next_seq(&mut self) -> String {
        self.seq += 1;
        self.seq.to_string()
    }

    async fn send(&mut self, m: Message) -> Result<(), Failure> {
        match &mut self.ws {
            Some(ws) => ws.send(m).await,
            None => Ok(()),
        }
    }

    /// `connected` and `start`, its custom parameters given.
    fn opening(&mut self) -> [Message; 2] {
        let params: serde_json::Map<String, Value> = self
            .custom
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let start = json!({"event": "start", "sequenceNumber": self.next_seq(), "streamSid": self.stream_sid,
            "start": {"accountSid": self.account_sid, "streamSid": self.stream_sid, "callSid": self.call_sid,
                "tracks": ["inbound"], "customParameters": params,
                "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}});
        [
            Message::text(
                json!({"event": "connected", "protocol": "Call", "version": "1.0.0"}).to_string(),
            ),
            Message::text(start.to_string()),
        ]
    }

    /// A `media` event: one frame, µ-law.
    fn media(&mut self, samples: &[f32], at_ms: u64) -> Message {
        self.chunk += 1;
        let payload =
            base64::engine::general_purpose::STANDARD.encode(voice::pcm::to_ulaw(samples));
        let seq = self.next_seq();
        Message::text(format!(
            r#"{{"event":"media","sequenceNumber":"{seq}","media":{{"track":"inbound","chunk":"{}","timestamp":"{at_ms}","payload":"{payload}"}},"streamSid":"{}"}}"#,
            self.chunk, self.stream_sid
        ))
    }

    fn mark_event(&mut self, name: &str) -> Message {
        Message::text(json!({"event": "mark", "sequenceNumber": self.next_seq(), "streamSid": self.stream_sid, "mark": {"name": name}}).to_string())
    }

    fn stop(&mut self) -> Message {
        Message::text(json!({"event": "stop", "sequenceNumber": self.next_seq(), "streamSid": self.stream_sid,
            "stop": {"accountSid": self.account_sid, "callSid": self.call_sid}}).to_string())
    }
}

impl Transport for Twilio {
    async fn open(&mut self) -> Result<(), Failure> {
        for m in self.opening() {
            self.send(m).await?;
        }
        Ok(())
    }

    fn say(&mut self, _: usize) {}

    async fn frame(&mut self, samples: &[f32], at_ms: u64) -> Result<(), Failure> {
        let m = self.media(samples, at_ms);
        self.send(m).await
    }

    async fn mark(&mut self, name: &str) -> Result<(), Failure> {
        let m = self.mark_event(name);
        self.send(m).await
    }

    fn heard_to(&self, now: Instant) -> Instant {
        now
    }

    async fn next(&mut self) -> Result<Heard, Failure> {
        match &mut self.ws {
            Some(ws) => ws.next().await.map(|m| read(&m)),
            None => std::future::pending().await,
        }
    }

    async fn hang_up(mut self, _: &Tally) {
        let stop = self.stop();
        let _ = self.send(stop).await;
        if let Some(ws) = self.ws.take() {
            ws.close().await;
        }
    }
}

/// A message from the bot, as Twilio's media streams read it.
fn read(msg: &Message) -> Heard {
    match msg {
        Message::Text(t) => event(t.as_str()),
        Message::Binary(_) => Heard::Bad(
            "a binary frame: Twilio Media Streams carries JSON text messages only".into(),
        ),
        _ => Heard::Ignored,
    }
}

/// A Twilio message from the bot: `media`, `mark`, `clear`.
fn event(text: &str) -> Heard {
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
        let mut l = Twilio::new(3, vec![("caller".into(), "s0".into())]);
        let open = l.opening();
        let start: Value = serde_json::from_str(open[1].to_text().unwrap()).unwrap();
        assert_eq!(start["start"]["mediaFormat"]["encoding"], "audio/x-mulaw");
        assert_eq!(start["start"]["customParameters"]["caller"], "s0");
        assert!(start["start"]["callSid"]
            .as_str()
            .unwrap()
            .starts_with("CA"));
        let media: Value =
            serde_json::from_str(l.media(&[0.0; 160], 20).to_text().unwrap()).unwrap();
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
        assert_eq!(read(&Message::text(bot)), Heard::Audio(vec![0.0; 4]));
        assert_eq!(
            read(&Message::text(r#"{"event":"clear","streamSid":"MZ1"}"#)),
            Heard::Clear
        );
        assert!(
            matches!(read(&Message::text("garbage")), Heard::Bad(m) if m.starts_with("not JSON"))
        );
        let stop: Value = serde_json::from_str(l.stop().to_text().unwrap()).unwrap();
        assert_eq!(stop["sequenceNumber"], "3");
    }
}
