//! A call's turns: the bot's greeting heard, then each turn the caller's words said, the
//! reply listened to until it ends (or spoken over, in a share of turns), the caller's
//! pause, and the turn's figures counted; each reply's words read off the async threads.

use super::{words, Call, Owner, Transport};
use crate::run::tally::TurnFigures;
use crate::run::{Ctx, Failure};
use crate::spec::voice::VoiceSpec;
use crate::spec::SessionSpec;
use std::time::Duration;
use tokio::time::Instant;

/// After a reply starts, the caller who barges in starts talking this much later.
const BARGE_AFTER: Duration = Duration::from_millis(600);
/// The bot has fallen silent after a barge-in when nothing played for this long.
const BARGE_QUIET: Duration = Duration::from_millis(250);

impl<T: Transport> Call<'_, T> {
    /// The call's turns, after the bot's greeting when it speaks first.
    pub(super) async fn turns(
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
                Err(f) if f.is("timeout") => return Ok(()),
                other => other?,
            }
            if self.play.reply.loud_until == mark {
                return Ok(());
            }
            let cap = Instant::now() + self.reply_cap;
            match self.pump(|c, now| c.play.ended(now, quiet), cap).await {
                Err(f) if f.is("timeout") => return Ok(()),
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
            Err(f) if f.is("timeout") => {
                return Err(Failure::new(
                    "timeout",
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
            Err(f) if f.is("timeout") => Err(Failure::new("timeout", format!("{what}: the bot's reply went on past turn_timeout_ms ({} ms) without {} ms of silence", self.reply_cap.as_millis(), v.reply_end_ms))),
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
