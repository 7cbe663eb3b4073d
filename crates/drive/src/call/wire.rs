//! How a call's audio travels. A WebSocket carries the line's messages (Twilio Media
//! Streams, raw PCM), which `line` writes and reads; a WebRTC peer (`rtc`) carries Opus
//! over SRTP, placed by signalling its offer to the bot. Either way the call sends a frame
//! of the caller's audio on its clock and hears the bot's as it comes: what the call
//! measures does not depend on the wire.

use super::line::{Heard, LineIo};
use crate::run::tally::Tally;
use crate::run::Failure;
use crate::spec::voice::{Line, VoiceSpec};
use futures_util::{SinkExt, StreamExt};
use std::collections::VecDeque;
use std::time::Duration;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) enum Wire {
    Ws(Box<Ws>),
    Rtc(Box<Rtc>),
}

/// A WebRTC call: its peer, and the caller's words coded ahead of their time.
pub(crate) struct Rtc {
    line: rtc::Line,
    /// Each turn's words as Opus packets, a frame each, taken when the turn is said.
    words: Vec<Vec<Vec<u8>>>,
    /// What a frame of silence is sent as.
    silence: Vec<u8>,
    /// The packets of the words being said.
    saying: VecDeque<Vec<u8>>,
}

/// Where the call goes: the session's url (filled), its headers, how long it may take.
pub(crate) struct Dial<'a> {
    pub url: &'a str,
    pub headers: Vec<(String, String)>,
    /// The call's own name (the session's, with its nonce): a LiveKit call's room.
    pub name: String,
    /// The whole of placing it (the session's turn_timeout_ms).
    pub timeout: Duration,
}

impl Wire {
    /// Places the call; its setup recorded (a WebRTC call's part by part). A WebRTC call
    /// sends the words `code` made of it.
    pub async fn connect(
        v: &VoiceSpec,
        d: &Dial<'_>,
        tally: &Tally,
        coded: Option<Coded>,
    ) -> Result<Wire, Failure> {
        let began = Instant::now();
        let wire = match (v.line, coded) {
            (Line::WebRtc(how), Some(c)) => rtc_call(v, d, how, tally).await.map(|line| {
                Wire::Rtc(Box::new(Rtc {
                    line,
                    words: c.words,
                    silence: c.silence,
                    saying: VecDeque::new(),
                }))
            }),
            (Line::WebRtc(_), None) => Err((
                "config".into(),
                "a WebRTC call's words were not coded".into(),
            )),
            _ => ws_call(d).await,
        };
        match &wire {
            Ok(_) => tally.call(Some(began.elapsed())),
            Err(_) => tally.dropped(),
        }
        wire
    }

    /// A message of the line (Twilio's events); a WebRTC call has none to send.
    pub async fn send(&mut self, m: Message) -> Result<(), Failure> {
        match self {
            Wire::Ws(ws) => ws.send(m).await.map_err(|e| {
                (
                    "dropped".to_string(),
                    format!("the bot's socket broke while Plimsoll sent: {e}"),
                )
            }),
            Wire::Rtc(_) => Ok(()),
        }
    }

    /// Turn `i`'s words are said from the next frame: a WebRTC call sends their packets.
    pub fn say(&mut self, i: usize) {
        if let Wire::Rtc(r) = self {
            let words = r.words.get_mut(i).map(std::mem::take).unwrap_or_default();
            r.saying.extend(words);
        }
    }

    /// One frame of the caller's audio, `at_ms` after the call began.
    pub async fn frame(
        &mut self,
        io: &mut LineIo,
        samples: &[f32],
        at_ms: u64,
    ) -> Result<(), Failure> {
        match self {
            Wire::Ws(_) => {
                let m = io.frame(samples, at_ms);
                self.send(m).await
            }
            // Coded ahead of its time: the words' next packet, or silence.
            Wire::Rtc(r) => {
                let packet = r.saying.pop_front();
                let packet = packet.unwrap_or_else(|| r.silence.clone());
                match r.line.frames.send((packet, at_ms)).await {
                    Ok(()) => Ok(()),
                    Err(_) => Err(why_it_ended(&mut r.line)),
                }
            }
        }
    }

    /// When the bot's audio heard so far is complete to: the arrival of its oldest packet
    /// still being decoded (a WebRTC call's, decoded off the clock), else now.
    pub fn heard_to(&self, now: Instant) -> Instant {
        match self {
            Wire::Ws(_) => now,
            Wire::Rtc(r) => r
                .line
                .backlog
                .oldest()
                .map_or(now, |at| Instant::from_std(at).min(now)),
        }
    }

    /// What the bot sent next, read as the line reads it; an error when the call broke.
    pub async fn next(&mut self, io: &LineIo) -> Result<Heard, Failure> {
        match self {
            Wire::Ws(ws) => match ws.next().await {
                Some(Ok(Message::Close(_))) | None => {
                    Err(("dropped".into(), "the bot closed the call's socket".into()))
                }
                Some(Err(e)) => Err(("dropped".into(), format!("the call's socket broke: {e}"))),
                Some(Ok(m)) => Ok(io.read(&m)),
            },
            Wire::Rtc(r) => match r.line.heard.recv().await {
                Some(rtc::Audio::Samples(s, at)) => Ok(Heard::Arrived(s, at)),
                Some(rtc::Audio::Ended(e)) => Err(failure(e)),
                None => Err(why_it_ended(&mut r.line)),
            },
        }
    }

    /// Hangs up: Twilio's `stop` and a close, or the peer closed (and a WHIP session
    /// deleted) with what the network did to the call counted.
    pub async fn hang_up(self, io: &mut LineIo, tally: &Tally) {
        match self {
            Wire::Ws(mut ws) => {
                if let Some(m) = io.stop() {
                    let _ = ws.send(m).await;
                }
                let _ = tokio::time::timeout(Duration::from_millis(500), ws.close(None)).await;
            }
            Wire::Rtc(r) => {
                let stats = *r.line.stats.lock().unwrap_or_else(|p| p.into_inner());
                tally.rtc_net(&stats);
                r.line.hang_up().await;
            }
        }
    }
}

async fn ws_call(d: &Dial<'_>) -> Result<Wire, Failure> {
    match tokio::time::timeout(d.timeout, tokio_tungstenite::connect_async(d.url)).await {
        Ok(Ok((ws, _))) => Ok(Wire::Ws(Box::new(ws))),
        Ok(Err(e)) => Err(("connect".into(), format!("{}: {e}", d.url))),
        Err(_) => Err((
            "timeout".into(),
            format!(
                "{}: no WebSocket within {} ms",
                d.url,
                d.timeout.as_millis()
            ),
        )),
    }
}

/// A WebRTC caller's words as Opus packets, a turn's a frame each, and a frame of silence.
pub(crate) struct Coded {
    words: Vec<Vec<Vec<u8>>>,
    silence: Vec<u8>,
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
        Err(_) => Err((
            "config".into(),
            "the caller's words could not be coded: the voice's thread is gone".into(),
        )),
    }
}

async fn rtc_call(
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
        Err(_) => Err((
            "timeout".into(),
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
    ("dropped".into(), "the call's WebRTC peer stopped".into())
}

/// A WebRTC call's error as the step counts it.
fn failure(e: rtc::CallError) -> Failure {
    let kind = match e.kind {
        "signaling" | "ice" | "dtls" => "connect",
        "sdp" => "protocol",
        "timeout" => "timeout",
        _ => "dropped",
    };
    (kind.to_string(), e.message)
}
