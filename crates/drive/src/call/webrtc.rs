//! WebRTC: Opus over SRTP to a peer placed by signalling an offer to the bot
//! (SmallWebRTC, WHIP or a LiveKit room: `rtc`'s). The caller's words are coded ahead of
//! their time, off the async threads; the bot's audio is decoded off the clock, and
//! what has been heard is complete to its oldest packet still being decoded.

use super::transport::{Dial, Heard, Transport};
use crate::run::tally::Tally;
use crate::run::Failure;
use crate::spec::voice::{Line, VoiceSpec};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;

/// A WebRTC call: its peer, and the caller's words coded ahead of their time.
pub(crate) struct WebRtc {
    line: rtc::Line,
    /// Each turn's words as Opus packets, a frame each, taken when the turn is said.
    words: Vec<Vec<Vec<u8>>>,
    /// What a frame of silence is sent as.
    silence: Vec<u8>,
    /// The packets of the words being said.
    saying: VecDeque<Vec<u8>>,
}

/// A WebRTC caller's words as Opus packets, a turn's a frame each, and a frame of silence.
pub(crate) struct Coded {
    words: Vec<Vec<Vec<u8>>>,
    silence: Vec<u8>,
}

impl WebRtc {
    /// Places the call (its setup recorded part by part), to send the words `coded` made.
    pub async fn place(
        v: &VoiceSpec,
        d: &Dial<'_>,
        how: rtc::Signaling,
        tally: &Tally,
        coded: Coded,
    ) -> Result<WebRtc, Failure> {
        let line = open(v, d, how, tally).await?;
        Ok(WebRtc {
            line,
            words: coded.words,
            silence: coded.silence,
            saying: VecDeque::new(),
        })
    }
}

impl Transport for WebRtc {
    async fn open(&mut self) -> Result<(), Failure> {
        Ok(())
    }

    fn say(&mut self, i: usize) {
        let words = self
            .words
            .get_mut(i)
            .map(std::mem::take)
            .unwrap_or_default();
        self.saying.extend(words);
    }

    /// Coded ahead of its time: the words' next packet, or silence.
    async fn frame(&mut self, _: &[f32], at_ms: u64) -> Result<(), Failure> {
        let packet = self.saying.pop_front();
        let packet = packet.unwrap_or_else(|| self.silence.clone());
        match self.line.frames.send((packet, at_ms)).await {
            Ok(()) => Ok(()),
            Err(_) => Err(why_it_ended(&mut self.line)),
        }
    }

    async fn mark(&mut self, _: &str) -> Result<(), Failure> {
        Ok(())
    }

    fn heard_to(&self, now: Instant) -> Instant {
        self.line
            .backlog
            .oldest()
            .map_or(now, |at| Instant::from_std(at).min(now))
    }

    async fn next(&mut self) -> Result<Heard, Failure> {
        match self.line.heard.recv().await {
            Some(rtc::Audio::Samples(s, at)) => Ok(Heard::Arrived(s, at)),
            Some(rtc::Audio::Ended(e)) => Err(failure(e)),
            None => Err(why_it_ended(&mut self.line)),
        }
    }

    /// The peer closed (and a WHIP session deleted), what the network did counted.
    async fn hang_up(self, tally: &Tally) {
        let stats = *self.line.stats.lock().unwrap_or_else(|p| p.into_inner());
        tally.rtc_net(&stats);
        self.line.hang_up().await;
    }
}

/// A WebRTC call's words (`mouths`, a turn each) Opus-coded on the voice's pool before
/// the call is placed, as they were spoken: off the async threads, out of its setup time.
/// None for a line that sends samples as they are.
pub(crate) async fn code(
    v: &VoiceSpec,
    tally: &Tally,
    mouths: &[Vec<f32>],
) -> Result<Option<Coded>, Failure> {
    if !matches!(v.line, Line::WebRtc(_)) {
        return Ok(None);
    }
    let (rate, frame) = (v.line.rate(), Duration::from_millis(v.frame_ms as u64));
    let mouths = mouths.to_vec();
    let job = tally.background.submit(move || {
        let words = mouths
            .iter()
            .map(|m| rtc::encode(m, rate, frame))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Coded {
            words,
            silence: rtc::silence(rate, frame)?,
        })
    });
    match job.await {
        Ok(coded) => coded.map(Some).map_err(failure),
        Err(_) => Err(Failure::new(
            "config",
            "the caller's words could not be coded: the voice's thread is gone",
        )),
    }
}

async fn open(
    v: &VoiceSpec,
    d: &Dial<'_>,
    how: rtc::Signaling,
    tally: &Tally,
) -> Result<rtc::Line, Failure> {
    let join = v.livekit.as_ref().map(|k| rtc::livekit::Join {
        key: k.key.clone(),
        secret: k.secret.clone(),
        dispatch: k.dispatch.clone(),
        room: d.name.clone(),
        identity: format!("caller-{}", d.name),
    });
    let place = rtc::Place {
        how,
        url: d.url,
        headers: &d.headers,
        rate: v.line.rate(),
        frame: Duration::from_millis(v.frame_ms as u64),
        connect_timeout: Duration::from_millis(v.answer_timeout_ms),
        livekit: join.as_ref(),
        decoding: &tally.opus,
    };
    match tokio::time::timeout(d.timeout, rtc::open(&place)).await {
        Ok(Ok((line, setup))) => {
            tally.rtc_setup(&setup);
            Ok(line)
        }
        Ok(Err(e)) => Err(failure(e)),
        Err(_) => Err(Failure::new(
            "timeout",
            format!(
                "{}: the call was not placed within {} ms",
                d.url,
                d.timeout.as_millis()
            ),
        )),
    }
}

/// Why a WebRTC call's peer stopped: the reason it left before it went, when there is one.
fn why_it_ended(l: &mut rtc::Line) -> Failure {
    while let Ok(a) = l.heard.try_recv() {
        if let rtc::Audio::Ended(e) = a {
            return failure(e);
        }
    }
    Failure::new("dropped", "the call's WebRTC peer stopped")
}

/// A WebRTC call's error as the step counts it.
fn failure(e: rtc::CallError) -> Failure {
    let kind = match e.kind {
        "signaling" | "ice" | "dtls" => "connect",
        "sdp" => "protocol",
        "timeout" => "timeout",
        _ => "dropped",
    };
    Failure::new(kind, e.message)
}
