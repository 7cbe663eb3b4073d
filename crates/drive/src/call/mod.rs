//! A voice call as a session (`protocol = "twilio"`, `"pcm-ws"` or `"webrtc"`): one call
//! over its transport (`transport`: `twilio`, `pcm`, `webrtc`), a frame of audio every
//! 20 ms in real time for the whole call (the caller's words, or silence between them, as
//! a phone line sends), the bot's audio played as a phone plays it. Each turn the caller
//! speaks its utterance, then listens until the bot has finished (or, in a share of
//! turns, speaks over it), then pauses. Measured per turn: the end of the caller's speech
//! to the bot's first audio, stalls in the bot's audio, whether the words heard were this
//! call's reply; per call: its setup; and the harness's own frame timing. The playback
//! clock is `playback`'s, the sums `tally`'s.

mod pcm;
pub(crate) mod playback;
mod tape;
mod tape_note;
mod transport;
mod turns;
mod twilio;
mod webrtc;
mod words;
mod ws;

use crate::run::tally::Tally;
use crate::run::{Ctx, Failure};
use crate::spec::voice::Line;
use crate::spec::voice::VoiceSpec;
use crate::spec::SessionSpec;
use playback::Playback;
use std::collections::VecDeque;
use std::time::Duration;
use tape::Tape;
use tokio::time::Instant;
use transport::{placed, Dial, Heard, Transport};
use words::{utterances, words};

pub use crate::run::options::{Owner, NO_CALL};

struct Call<'a, T> {
    wire: T,
    /// The line's rate: what the caller's words and the bot's audio are sampled at.
    rate: u32,
    play: Playback,
    samples_per_frame: usize,
    frame: Duration,
    t0: Instant,
    next_send: Instant,
    /// What the caller is about to say (samples at the line's rate).
    mouth: VecDeque<f32>,
    /// When the last of the caller's words left, and how many samples were words.
    spoke_until: Option<Instant>,
    spoken: usize,
    tally: &'a Tally,
    /// A `clear` arrived since it was last looked at.
    cleared: bool,
    /// How long a reply may run once it started (the session's `turn_timeout_ms`).
    reply_cap: Duration,
    /// Each reply's words being read, by turn.
    pending: Vec<(u32, crate::run::background::Receiver<words::Reading>)>,
    /// The call's audio, kept when it goes wrong.
    tape: Option<Tape<'a>>,
}

/// One call: connected, its turns spoken and listened to, hung up.
pub(crate) async fn run(
    spec: &SessionSpec,
    ctx: &Ctx<'_>,
    name: &str,
    turns: u32,
    fill: &(dyn Fn(&str, u32) -> Result<String, Failure> + Sync),
) -> Result<(), Failure> {
    let v = spec
        .voice
        .as_ref()
        .ok_or_else(|| Failure::new("config", "a voice call needs [voice]"))?;
    let tally = ctx
        .recorder
        .voice
        .as_ref()
        .ok_or_else(|| Failure::new("config", "no voice tally"))?;
    let url = fill(&spec.turn[0].url, 1)?;
    crate::address::target(&url, ctx.allow_remote)
        .map_err(|e| Failure::new("config", e.to_string()))?;
    // Every turn's words spoken (and for WebRTC, Opus-coded) before the call opens, off
    // the async threads: neither must hold up any call's frames.
    let mouths = utterances(v, fill, turns, tally).await?;
    let coded = webrtc::code(v, tally, &mouths).await?;
    let headers: Result<Vec<(String, String)>, Failure> = spec.turn[0]
        .headers
        .iter()
        .map(|(k, t)| Ok((k.clone(), fill(t, 1)?)))
        .collect();
    let custom: Result<Vec<(String, String)>, Failure> = v
        .custom
        .iter()
        .map(|(k, t)| Ok((k.clone(), fill(t, 1)?)))
        .collect();
    let dial = Dial {
        url: &url,
        headers: headers?,
        name: fill("plimsoll-{{session}}-{{nonce}}", 1)?,
        timeout: Duration::from_millis(spec.turn_timeout_ms),
        custom: custom?,
    };
    let talk = Talk {
        spec,
        v,
        ctx,
        name,
        turns,
        mouths: &mouths,
        tally,
    };
    match (v.line, coded) {
        (Line::Twilio, _) => {
            let seed = crate::template::seed_of(name);
            talk.over(placed(tally, twilio::Twilio::place(&dial, seed)).await?)
                .await
        }
        (Line::Pcm { .. }, _) => {
            talk.over(placed(tally, pcm::Pcm::place(&dial)).await?)
                .await
        }
        (Line::WebRtc(how), Some(c)) => {
            let placing = webrtc::WebRtc::place(v, &dial, how, tally, c);
            talk.over(placed(tally, placing).await?).await
        }
        (Line::WebRtc(_), None) => Err(Failure::new(
            "config",
            "a WebRTC call's words were not coded",
        )),
    }
}

/// What a placed call is to do: the session's turns, spoken and listened to.
struct Talk<'s, 'a> {
    spec: &'s SessionSpec,
    v: &'s VoiceSpec,
    ctx: &'s Ctx<'a>,
    name: &'s str,
    turns: u32,
    mouths: &'s [Vec<f32>],
    tally: &'a Tally,
}

impl<'s, 'a> Talk<'s, 'a> {
    /// The call over its transport: opened, its turns, hung up, its replies' words read.
    async fn over<T: Transport>(self, wire: T) -> Result<(), Failure> {
        let Talk {
            spec,
            v,
            ctx,
            name,
            turns,
            mouths,
            tally,
        } = self;
        let mut call = Call::new(wire, v, tally);
        call.reply_cap = Duration::from_millis(spec.turn_timeout_ms);
        call.wire.open().await?;
        let out = call.turns(spec, v, name, turns, mouths, ctx).await;
        if out.as_ref().is_err_and(|f| f.is("dropped")) {
            tally.dropped();
        }
        tally.audio(call.caller_s(), call.play.sent_s);
        let pending = std::mem::take(&mut call.pending);
        let tape = call.tape.take();
        call.hang_up().await;
        let mut found = Vec::new();
        for (turn, h) in pending {
            // A reading that never came back (its thread is gone) heard nothing.
            let heard = h.await.unwrap_or_default();
            found.push((turn, words(&heard, name, tally)));
        }
        let wrong = found.iter().find_map(|(_, f)| f.failure(name));
        let out = match (out, wrong) {
            (Ok(()), Some(w)) => Err(Failure::new("words", w)),
            (out, _) => out,
        };
        match tape {
            Some(t) => tape::keep(t, name, out, &found, mouths, tally).await,
            None => out,
        }
    }
}

impl<'a, T: Transport> Call<'a, T> {
    fn new(wire: T, v: &VoiceSpec, tally: &'a Tally) -> Call<'a, T> {
        let rate = v.line.rate();
        let now = Instant::now();
        let frame = Duration::from_millis(v.frame_ms as u64);
        Call {
            wire,
            rate,
            play: match v.line {
                Line::WebRtc(_) => Playback::buffered(rate, playback::WEBRTC_BUFFER),
                _ => Playback::new(rate),
            },
            samples_per_frame: (rate as u64 * v.frame_ms as u64 / 1000) as usize,
            frame,
            t0: now,
            next_send: now,
            mouth: VecDeque::new(),
            spoke_until: None,
            spoken: 0,
            tally,
            cleared: false,
            reply_cap: Duration::from_secs(60),
            pending: Vec::new(),
            tape: tally.keeper.as_ref().map(|k| Tape::new(k, rate)),
        }
    }

    fn tape_turn(&mut self, turn: u32) {
        if let Some(t) = &mut self.tape {
            t.turn = turn;
        }
    }

    fn caller_s(&self) -> f64 {
        self.spoken as f64 / self.play_rate()
    }

    fn play_rate(&self) -> f64 {
        self.rate as f64
    }

    /// Sends frames on time and reads the bot until `done` (checked every step), or
    /// `limit` (a timeout).
    async fn pump(
        &mut self,
        done: impl Fn(&Self, Instant) -> bool,
        limit: Instant,
    ) -> Result<(), Failure> {
        loop {
            // The audio's clock: a reply's end, a silence and a deadline are judged on what
            // has been heard, so a WebRTC call's decoding that lags delays them.
            let now = self.wire.heard_to(Instant::now());
            if done(self, now) {
                return Ok(());
            }
            if now >= limit {
                return Err(Failure::new("timeout", "waited too long"));
            }
            // Past the deadline on the wall clock but not yet on the audio's: the next frame
            // or the next decoded packet wakes the loop, not the deadline again.
            let wake = match limit > Instant::now() {
                true => self.next_send.min(limit),
                false => self.next_send,
            };
            tokio::select! {
                _ = tokio::time::sleep_until(wake) => {
                    if Instant::now() >= self.next_send {
                        self.send_frame().await?;
                    }
                }
                h = self.wire.next() => self.heard(h?).await?,
            }
            for name in self.play.played_marks(Instant::now()) {
                self.wire.mark(&name).await?;
            }
        }
    }

    /// The next frame: the caller's words, or silence; its lateness recorded.
    async fn send_frame(&mut self) -> Result<(), Failure> {
        let now = Instant::now();
        self.tally
            .jitter(now.saturating_duration_since(self.next_send));
        let n = self.samples_per_frame;
        let speaking = !self.mouth.is_empty();
        let mut frame: Vec<f32> = self.mouth.drain(..n.min(self.mouth.len())).collect();
        self.spoken += frame.len();
        frame.resize(n, 0.0);
        if let Some(t) = &mut self.tape {
            t.sent(n);
        }
        let at_ms = now.duration_since(self.t0).as_millis() as u64;
        self.wire.frame(&frame, at_ms).await?;
        if speaking {
            self.spoke_until = Some(now + self.frame);
        }
        self.next_send += self.frame;
        // Far behind (a starved harness): start again from now rather than burst.
        if now > self.next_send + Duration::from_secs(1) {
            self.next_send = now + self.frame;
        }
        Ok(())
    }

    /// The bot's audio, arrived `now`: played, and kept where the call's audio is.
    fn audio(&mut self, x: &[f32], now: Instant) {
        let waiting = self.play.reply.first.is_none();
        self.play.audio(x, now);
        if let Some(t) = &mut self.tape {
            let began = waiting && self.play.reply.first.is_some();
            t.heard(x, now.duration_since(self.t0).as_millis() as u64, began);
        }
    }

    /// One message from the bot, as the line read it.
    async fn heard(&mut self, h: Heard) -> Result<(), Failure> {
        match h {
            Heard::Audio(x) => self.audio(&x, Instant::now()),
            Heard::Arrived(x, at) => self.audio(&x, Instant::from_std(at)),
            Heard::Mark(name) => self.play.mark(name),
            Heard::Clear => {
                self.cleared = true;
                for name in self.play.clear(Instant::now()) {
                    self.wire.mark(&name).await?;
                }
            }
            Heard::Ignored => {}
            Heard::Bad(why) => return Err(Failure::new("protocol", format!("the bot sent {why}"))),
        }
        Ok(())
    }

    async fn hang_up(self) {
        self.wire.hang_up(self.tally).await;
    }
}
