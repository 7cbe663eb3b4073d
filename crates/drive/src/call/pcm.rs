//! Raw PCM over a WebSocket: binary frames of 16-bit little-endian samples both ways, at
//! the line's rate; no events, no marks.

use super::transport::{Dial, Heard, Transport};
use super::ws::Ws;
use crate::run::tally::Tally;
use crate::run::Failure;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// One call's end of a raw PCM line.
pub(crate) struct Pcm(Ws);

impl Pcm {
    /// Dials the bot.
    pub async fn place(d: &Dial<'_>) -> Result<Pcm, Failure> {
        Ok(Pcm(Ws::dial(d).await?))
    }
}

impl Transport for Pcm {
    async fn open(&mut self) -> Result<(), Failure> {
        Ok(())
    }

    fn say(&mut self, _: usize) {}

    async fn frame(&mut self, samples: &[f32], _: u64) -> Result<(), Failure> {
        self.0
            .send(Message::binary(voice::pcm::to_s16le(samples)))
            .await
    }

    async fn mark(&mut self, _: &str) -> Result<(), Failure> {
        Ok(())
    }

    fn heard_to(&self, now: Instant) -> Instant {
        now
    }

    async fn next(&mut self) -> Result<Heard, Failure> {
        self.0.next().await.map(|m| read(&m))
    }

    async fn hang_up(self, _: &Tally) {
        self.0.close().await;
    }
}

/// A message from the bot: a binary frame is audio, anything else is not acted on.
fn read(msg: &Message) -> Heard {
    match msg {
        Message::Binary(b) => Heard::Audio(voice::pcm::from_s16le(b)),
        _ => Heard::Ignored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_frame_is_audio_and_text_is_not_acted_on() {
        let frame = voice::pcm::to_s16le(&[0.0, 0.5]);
        match read(&Message::binary(frame)) {
            Heard::Audio(x) => assert_eq!(x.len(), 2),
            h => panic!("{h:?}"),
        }
        assert_eq!(read(&Message::text("{}")), Heard::Ignored);
    }
}
