//! A voice call as a session (`protocol = "twilio"`, `"pcm-ws"` or `"webrtc"`): one
//! WebSocket or WebRTC peer (`wire`), a frame of audio every 20 ms in real time for the whole call (the caller's words, or
//! silence between them, as a phone line sends), the bot's audio played as a phone plays
//! it. Each turn the caller speaks its utterance, then listens until the bot has finished
//! (or, in a share of turns, speaks over it), then pauses. Measured per turn: the end of
//! the caller's speech to the bot's first audio, stalls in the bot's audio, whether the
//! words heard were this call's reply; per call: its setup; and the harness's own frame
//! timing. The line's messages are `line`'s, the playback clock `playback`'s, the sums
//! `tally`'s.

pub(crate) mod line;
pub(crate) mod playback;
mod tape;
mod tape_note;
mod wire;
mod words;

use crate::run::tally::{Tally, TurnFigures};
use crate::run::{Ctx, Failure};
use crate::spec::voice::VoiceSpec;
use crate::spec::SessionSpec;
use line::{Heard, LineIo};
use playback::Playback;
use std::collections::VecDeque;
use std::time::Duration;
use tape::Tape;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use wire::{Dial, Wire};
use words::{utterances, words};

pub use crate::run::options::{Owner, NO_CALL};

/// After a reply starts, the caller who barges in starts talking this much later.
const BARGE_AFTER: Duration = Duration::from_millis(600);
/// The bot has fallen silent after a barge-in when nothing played for this long.
const BARGE_QUIET: Duration = Duration::from_millis(250);

struct Call<'a> {
    wire: Wire,
    io: LineIo,
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
    let v = spec.voice.as_ref().ok_or_else(|| {
        (
            "config".to_string(),
            "a voice call needs [voice]".to_string(),
        )
    })?;
    let tally = ctx
        .recorder
        .voice
        .as_ref()
        .ok_or_else(|| ("config".to_string(), "no voice tally".to_string()))?;
    let url = fill(&spec.turn[0].url, 1)?;
    crate::address::target(&url, ctx.allow_remote)
        .map_err(|e| ("config".to_string(), e.to_string()))?;
    // Every turn's words spoken (and for WebRTC, Opus-coded) before the call opens, off
    // the async threads: neither must hold up any call's frames.
    let mouths = utterances(v, fill, turns, tally).await?;
    let coded = wire::code(v, tally, &mouths).await?;
    let headers: Result<Vec<(String, String)>, Failure> = spec.turn[0]
        .headers
        .iter()
        .map(|(k, t)| Ok((k.clone(), fill(t, 1)?)))
        .collect();
    let dial = Dial {
        url: &url,
        headers: headers?,
        name: fill("plimsoll-{{session}}-{{nonce}}", 1)?,
        timeout: Duration::from_millis(spec.turn_timeout_ms),
    };
    let wire = Wire::connect(v, &dial, tally, coded).await?;
    let mut call = Call::new(wire, v, name, tally);
    call.reply_cap = Duration::from_millis(spec.turn_timeout_ms);
    let custom: Result<Vec<(String, String)>, Failure> = v
        .custom
        .iter()
        .map(|(k, t)| Ok((k.clone(), fill(t, 1)?)))
        .collect();
    for m in call.io.opening(&custom?) {
        call.send(m).await?;
    }
    let out = call.turns(spec, v, name, turns, &mouths, ctx).await;
    if out.as_ref().is_err_and(|(k, _)| k == "dropped") {
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
        (Ok(()), Some(w)) => Err(("words".into(), w)),
        (out, _) => out,
    };
    match tape {
        Some(t) => tape::keep(t, name, out, &found, &mouths, tally).await,
        None => out,
    }
}

impl<'a> Call<'a> {
    fn new(wire: Wire, v: &VoiceSpec, name: &str, tally: &'a Tally) -> Call<'a> {
        let rate = v.line.rate();
        let now = Instant::now();
        let frame = Duration::from_millis(v.frame_ms as u64);
        Call {
            wire,
            io: LineIo::new(v.line, crate::template::seed_of(name)),
            play: match v.line {
                crate::spec::voice::Line::WebRtc(_) => {
                    Playback::buffered(rate, playback::WEBRTC_BUFFER)
                }
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

    async fn send(&mut self, m: Message) -> Result<(), Failure> {
        self.wire.send(m).await
    }

    /// The call's turns, after the bot's greeting when it speaks first.
    async fn turns(
        &mut self,
        spec: &SessionSpec,
        v: &VoiceSpec,
        name: &str,
        turns: u32,
        mouths: &[Vec<f32>],
        ctx: &Ctx<'_>,
    ) -> Result<(), Failure> {
        if v.greeting {
            self.tape_turn(0);
            let limit = Instant::now() + Duration::from_millis(v.answer_timeout_ms);
            self.listen_for(v, limit, "its greeting").await?;
            self.play.take_reply();
        }
        let mut spoken_next = false;
        let think = Duration::from_secs_f64(spec.think_ms / 1000.0);
        let quiet = Duration::from_millis(v.reply_end_ms);
        for turn in 1..=turns {
            let began = Instant::now();
            self.tape_turn(turn);
            if !spoken_next {
                let words = &mouths[turn as usize - 1];
                self.say(turn as usize - 1, words);
                let limit = Instant::now()
                    + Duration::from_secs_f64(words.len() as f64 / v.line.rate() as f64)
                    + Duration::from_secs(5);
                self.pump(|c, _| c.mouth.is_empty(), limit).await?;
            }
            let spoke = self.spoke_until.unwrap_or_else(Instant::now);
            let limit = spoke + Duration::from_millis(v.answer_timeout_ms);
            let barge = turn < turns && barge_turn(name, turn, v.barge_in);
            spoken_next = match barge {
                true => {
                    self.barge(v, limit, turn as usize, &mouths[turn as usize])
                        .await?
                }
                false => false,
            };
            if !barge {
                self.listen_for(v, limit, &format!("turn {turn}")).await?;
            }
            if !spoken_next {
                // The caller's pause; the reply may go on after a silence (a stall).
                self.settle(
                    v,
                    if turn < turns {
                        think.max(quiet)
                    } else {
                        quiet
                    },
                )
                .await?;
            }
            let reply = self.play.take_reply();
            let first = reply.first.unwrap_or(spoke);
            let end = reply.loud_until.unwrap_or(first).max(first);
            self.tally.turn(&TurnFigures {
                response: first.saturating_duration_since(spoke),
                stall: reply.stall,
                longest: reply.longest,
                replied: Duration::from_secs_f64(reply.spoken as f64 / self.play_rate()),
                holes: voice::holes::holes(&reply.audio[..reply.spoken], v.line.rate()),
            });
            ctx.recorder.turn_ended(turn, spoke, Some(first), end);
            if let Some(owner) = ctx.voice_owner {
                self.read_later(turn, reply.audio, v.line.rate(), owner, (name, began));
            }
        }
        Ok(())
    }

    /// Turn `turn`'s reply read off the async threads, checked when the call is over; its
    /// sound compared with what the mock spoke during the turn (from `began`).
    fn read_later(
        &mut self,
        turn: u32,
        audio: Vec<f32>,
        rate: u32,
        owner: &Owner,
        (name, began): (&str, Instant),
    ) {
        let (owner, who) = (owner.clone(), name.to_string());
        let during = (began.into_std(), Instant::now().into_std());
        let words = self
            .tally
            .background
            .submit(move || words::read(audio, rate, owner, &who, during));
        self.pending.push((turn, words));
    }

    /// The caller's pause after a reply: `pause` of listening, begun again whenever the
    /// bot's speech goes on (the reply had not ended: its silence was a stall).
    async fn settle(&mut self, v: &VoiceSpec, pause: Duration) -> Result<(), Failure> {
        let quiet = Duration::from_millis(v.reply_end_ms);
        loop {
            let mark = self.play.reply.loud_until;
            let until = Instant::now() + pause;
            match self
                .pump(
                    |c, now| now >= until || c.play.reply.loud_until != mark,
                    until + self.frame,
                )
                .await
            {
                Err((k, _)) if k == "timeout" => return Ok(()),
                other => other?,
            }
            if self.play.reply.loud_until == mark {
                return Ok(());
            }
            let cap = Instant::now() + self.reply_cap;
            match self.pump(|c, now| c.play.ended(now, quiet), cap).await {
                Err((k, _)) if k == "timeout" => return Ok(()),
                other => other?,
            }
        }
    }

    /// Queues the caller's words (turn `i`'s, counted from 0).
    fn say(&mut self, i: usize, samples: &[f32]) {
        if let Some(t) = &mut self.tape {
            t.said(i, self.mouth.len());
        }
        self.mouth.extend(samples.iter().copied());
        self.wire.say(i);
    }

    /// Listens until the bot has answered (by `limit`, else an error) and finished (its
    /// reply may run as long as the session's `turn_timeout_ms`).
    async fn listen_for(
        &mut self,
        v: &VoiceSpec,
        limit: Instant,
        what: &str,
    ) -> Result<(), Failure> {
        match self.pump(|c, _| c.play.reply.first.is_some(), limit).await {
            Err((k, _)) if k == "timeout" => {
                return Err((
                    "timeout".into(),
                    format!(
                    "{what}: the bot never answered within {} ms after the caller stopped speaking",
                    v.answer_timeout_ms
                ),
                ))
            }
            other => other?,
        }
        let quiet = Duration::from_millis(v.reply_end_ms);
        let cap = Instant::now() + self.reply_cap;
        match self.pump(|c, now| c.play.ended(now, quiet), cap).await {
            Err((k, _)) if k == "timeout" => Err((
                "timeout".into(),
                format!("{what}: the bot's reply went on past turn_timeout_ms ({} ms) without {} ms of silence", self.reply_cap.as_millis(), v.reply_end_ms),
            )),
            other => other,
        }
    }

    /// A turn the caller speaks over: once the reply has gone on a while the next
    /// utterance starts, and the time the bot takes to fall silent (a `clear`, or its
    /// audio stopping) is measured. Whether the next utterance was spoken.
    async fn barge(
        &mut self,
        v: &VoiceSpec,
        limit: Instant,
        i: usize,
        next: &[f32],
    ) -> Result<bool, Failure> {
        self.pump(
            |c, now| {
                c.play.reply.first.is_some_and(|f| now >= f + BARGE_AFTER)
                    || c.play.ended(now, Duration::from_millis(v.reply_end_ms))
            },
            limit,
        )
        .await?;
        if self.play.reply.first.is_none()
            || self
                .play
                .ended(Instant::now(), Duration::from_millis(v.reply_end_ms))
        {
            return Ok(false); // no reply, or it ended before the caller could cut in
        }
        let start = Instant::now();
        self.cleared = false;
        self.say(i, next);
        let stop_limit = start + Duration::from_secs(10);
        self.pump(
            |c, now| c.cleared || c.play.silent_since(now, BARGE_QUIET),
            stop_limit,
        )
        .await?;
        self.tally.barge(start.elapsed());
        let spoken = Instant::now()
            + Duration::from_secs_f64(self.mouth.len() as f64 / self.play_rate())
            + Duration::from_secs(5);
        self.pump(|c, _| c.mouth.is_empty(), spoken).await?;
        Ok(true)
    }

    fn play_rate(&self) -> f64 {
        self.io.line.rate() as f64
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
                return Err(("timeout".into(), "waited too long".into()));
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
                h = self.wire.next(&self.io) => self.heard(h?).await?,
            }
            for name in self.play.played_marks(Instant::now()) {
                if let Some(m) = self.io.mark(&name) {
                    self.send(m).await?;
                }
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
        self.wire.frame(&mut self.io, &frame, at_ms).await?;
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
                    if let Some(m) = self.io.mark(&name) {
                        self.send(m).await?;
                    }
                }
            }
            Heard::Ignored => {}
            Heard::Bad(why) => return Err(("protocol".into(), format!("the bot sent {why}"))),
        }
        Ok(())
    }

    async fn hang_up(mut self) {
        self.wire.hang_up(&mut self.io, self.tally).await;
    }
}

/// Whether the caller barges into the reply of `turn`: the share `share` of turns,
/// spread by the call's name.
fn barge_turn(name: &str, turn: u32, share: f64) -> bool {
    if share <= 0.0 {
        return false;
    }
    let h = crate::template::seed_of(&format!("{name}/{turn}"));
    (h % 10_000) as f64 / 10_000.0 < share
}
