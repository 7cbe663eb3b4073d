//! The bot `plimsoll bench calls --transport webrtc` calls: a WebRTC answerer that costs
//! almost nothing, so what is measured is the caller's side. It takes Pipecat's
//! SmallWebRTC offer (`POST /api/offer`), answers with one Opus track each way and its host
//! candidate (ICE lite, str0m), and sends an Opus packet every 20 ms in real time, as a
//! WebRTC bot does: silence, or its reply. It hears the caller by the size of the caller's
//! Opus packets (the caller's libopus codes a silent frame in fewer bytes than speech, so
//! nothing is decoded), and after 500 ms of silence answers with a reply spoken once in Plimsoll's
//! voice and encoded once at startup. It runs on a thread of its own, held to one core,
//! with a runtime of its own; its CPU is its thread's.

use crate::bot_thread::{self, BotThread};
use axum::routing::post;
use axum::Json;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use str0m::change::SdpOffer;
use str0m::format::Codec;
use str0m::media::{Frequency, MediaTime, Mid, Pt};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};
use tokio::net::{TcpListener, UdpSocket};

/// What the bot says each turn.
const REPLY: &str = "Thank you. Your order ships today and arrives on Friday.";

/// An Opus packet this long or longer is speech; shorter, silence. The caller's coder
/// (`rtc::encode`: libopus, VoIP, the call's 16 kHz, complexity 0) codes its silent frame
/// in fewer bytes, and most of Plimsoll's speech in more (`packets_tell_speech_from_silence`).
const SPEECH_BYTES: usize = 32;

/// The bot's voice, encoded once: its reply's packets and a silent one.
struct Voice {
    reply: Vec<Vec<u8>>,
    silence: Vec<u8>,
}

/// Starts the bot on `core` (its own thread and runtime) and waits for its address
/// (offers go to `/api/offer`). It refuses to start if its reply cannot be spoken.
pub(crate) fn start(core: usize) -> anyhow::Result<BotThread> {
    bot_thread::start("bench-rtc-bot", core, || {
        let voice = Arc::new(voice()?);
        Ok(move |listener: TcpListener| async move {
            let app = axum::Router::new().route(
                "/api/offer",
                post(move |Json(offer): Json<Value>| answer(offer, voice.clone())),
            );
            let _ = axum::serve(listener, app).await;
        })
    })
}

/// The reply in Plimsoll's voice as 20 ms Opus packets at 48 kHz, and a silent packet,
/// coded as a caller codes its words (`rtc::encode`).
fn voice() -> anyhow::Result<Voice> {
    let speech = voice::speak(REPLY, 48000)
        .ok_or_else(|| anyhow::anyhow!("the bench bot's reply could not be spoken"))?;
    let frame = Duration::from_millis(20);
    Ok(Voice {
        reply: rtc::encode(&speech, 48000, frame)?,
        silence: rtc::silence(48000, frame)?,
    })
}

/// One offer: a peer on loopback that answers it, and its task.
async fn answer(
    offer: Value,
    voice: Arc<Voice>,
) -> Result<Json<Value>, (axum::http::StatusCode, String)> {
    let bad = |e: String| (axum::http::StatusCode::BAD_REQUEST, e);
    let sdp = offer["sdp"].as_str().ok_or_else(|| bad("no sdp".into()))?;
    let socket = UdpSocket::bind("127.0.0.1:0")
        .await
        .map_err(|e| bad(e.to_string()))?;
    let local = socket.local_addr().map_err(|e| bad(e.to_string()))?;
    let mut rtc = Rtc::builder()
        .clear_codecs()
        .enable_opus(true, false)
        .set_ice_lite(true)
        .set_rtcp_report_interval_audio(Duration::from_secs(1))
        .build(Instant::now());
    rtc.add_local_candidate(Candidate::host(local, "udp").map_err(|e| bad(e.to_string()))?);
    let offer = SdpOffer::from_sdp_string(sdp).map_err(|e| bad(e.to_string()))?;
    let answer = rtc
        .sdp_api()
        .accept_offer(offer)
        .map_err(|e| bad(e.to_string()))?;
    let peer = Peer {
        rtc,
        socket,
        local,
        voice,
        line: None,
        heard: Heard::default(),
        speaking: None,
        connected: false,
    };
    tokio::spawn(peer.go());
    Ok(Json(
        json!({"sdp": answer.to_sdp_string(), "type": "answer", "pc_id": "bench"}),
    ))
}

/// The caller's speech as the bot follows it: speaking, and the silent frames since.
#[derive(Default)]
struct Heard {
    speaking: bool,
    quiet: u32,
}

impl Heard {
    /// One of the caller's packets; true when the caller has just finished a turn.
    fn packet(&mut self, bytes: usize) -> bool {
        let loud = bytes >= SPEECH_BYTES;
        (self.speaking, self.quiet) = match (loud, self.speaking) {
            (true, _) => (true, 0),
            (false, true) => (true, self.quiet + 1),
            (false, false) => (false, 0),
        };
        if self.speaking && self.quiet >= 25 {
            *self = Heard::default();
            return true;
        }
        false
    }
}

/// One call's peer: datagrams, str0m's timers, and a packet out every 20 ms.
struct Peer {
    rtc: Rtc,
    socket: UdpSocket,
    local: SocketAddr,
    voice: Arc<Voice>,
    /// The audio track's mid and Opus payload type, once the offer's media is added.
    line: Option<(Mid, Pt)>,
    heard: Heard,
    /// The reply's next packet, while replying.
    speaking: Option<usize>,
    connected: bool,
}

impl Peer {
    async fn go(mut self) {
        let mut buf = vec![0u8; 2000];
        let began = tokio::time::Instant::now();
        let mut tick = tokio::time::interval_at(began, Duration::from_millis(20));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            let Some(deadline) = self.drain().await else {
                return;
            };
            // A caller that never connects (no candidate that answers) is given up on.
            if !self.connected && began.elapsed() > Duration::from_secs(10) {
                return;
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            let done = tokio::select! {
                r = self.socket.recv_from(&mut buf) => match r {
                    Ok((n, source)) => match Receive::new(Protocol::Udp, source, self.local, &buf[..n]) {
                        Ok(r) => self.rtc.handle_input(Input::Receive(Instant::now(), r)).is_err(),
                        Err(_) => false,
                    },
                    Err(_) => true,
                },
                _ = tokio::time::sleep(wait) => self.rtc.handle_input(Input::Timeout(Instant::now())).is_err(),
                at = tick.tick() => self.send(at - began).is_err(),
            };
            if done {
                return;
            }
        }
    }

    /// Everything str0m has to say, until it asks to be woken; None once the call is over.
    async fn drain(&mut self) -> Option<Instant> {
        loop {
            if !self.rtc.is_alive() {
                return None;
            }
            match self.rtc.poll_output().ok()? {
                Output::Timeout(t) => return Some(t),
                Output::Transmit(t) => {
                    let _ = self.socket.send_to(&t.contents, t.destination).await;
                }
                Output::Event(Event::MediaAdded(m)) => self.added(m.mid),
                Output::Event(Event::Connected) => self.connected = true,
                Output::Event(Event::MediaData(d)) => {
                    if self.heard.packet(d.data.len()) {
                        self.speaking = Some(0);
                    }
                }
                Output::Event(Event::IceConnectionStateChange(
                    IceConnectionState::Disconnected,
                )) => return None,
                Output::Event(_) => {}
            }
        }
    }

    fn added(&mut self, mid: Mid) {
        let pt = self.rtc.writer(mid).and_then(|w| {
            let pt = w
                .payload_params()
                .find(|p| p.spec().codec == Codec::Opus)
                .map(|p| p.pt());
            pt
        });
        self.line = pt.map(|pt| (mid, pt));
    }

    /// This 20 ms's packet (its tick `since` the peer began): the reply's next, or
    /// silence; its RTP time the tick's slot on the wall clock.
    fn send(&mut self, since: Duration) -> Result<(), str0m::RtcError> {
        let Some((mid, pt)) = self.line else {
            return Ok(());
        };
        let packet = match self.speaking {
            Some(i) if i < self.voice.reply.len() => {
                self.speaking = Some(i + 1);
                self.voice.reply[i].clone()
            }
            _ => {
                self.speaking = None;
                self.voice.silence.clone()
            }
        };
        let slot = (since.as_millis() as u64 + 10) / 20;
        let t = MediaTime::new(slot * 960, Frequency::FORTY_EIGHT_KHZ);
        match self.rtc.writer(mid) {
            Some(w) => w.write(pt, Instant::now(), t, packet),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_tell_speech_from_silence() {
        // As the caller codes them (rtc::encode, rtc::silence at the call's 16 kHz).
        let frame = Duration::from_millis(20);
        let speech = voice::speak("Where is my order? It was due on Monday.", 16000).unwrap();
        let spoken: Vec<usize> = rtc::encode(&speech, 16000, frame)
            .unwrap()
            .iter()
            .map(Vec::len)
            .collect();
        let quiet = rtc::silence(16000, frame).unwrap().len();
        let loud = spoken.iter().filter(|&&n| n >= SPEECH_BYTES).count();
        assert!(loud * 2 > spoken.len(), "speech: {spoken:?}");
        assert!(quiet < SPEECH_BYTES, "silence: {quiet}");
        // A turn ends after 500 ms of silence, not within the speech's own pauses.
        let mut h = Heard::default();
        assert_eq!(spoken.iter().filter(|&&n| h.packet(n)).count(), 0);
        assert_eq!((0..50).filter(|_| h.packet(quiet)).count(), 1);
    }
}
