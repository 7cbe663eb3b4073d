//! A peer's task: everything a call's audio goes through on one str0m `Rtc` — datagrams in
//! and out of its UDP socket, str0m's timers, the caller's packets (coded ahead, `encode`)
//! written on the RTP clock where the peer sends, the other side's packets decoded and
//! handed to the call where it receives, the network's figures kept as they come, and
//! what the signaling brings while the call goes on (trickled candidates, a renegotiating
//! offer).

use crate::codec::Coder;
use crate::decode::Audio;
use crate::error::CallError;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use str0m::change::SdpOffer;
use str0m::media::{Mid, Pt};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};

/// The network's figures for the bot's audio, as the caller received it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NetStats {
    /// RTP packets of the bot's audio received.
    pub packets: u64,
    /// Packets missing from the sequence (never came, or came too late to be played).
    pub lost: u64,
    /// Interarrival jitter (RFC 3550), as the caller's last receiver report said, in ms.
    pub jitter_ms: f64,
    /// The caller's packets the bot's receiver reports said were lost.
    pub lost_by_bot: u64,
}

/// What the signaling brings a peer while its call goes on.
pub(crate) enum Control {
    /// A candidate of the other side's, trickled.
    Candidate(Candidate),
    /// An offer renegotiating the session (a track added); its answer's SDP goes back.
    Offer(String, oneshot::Sender<Result<String, CallError>>),
}

/// The peer's task: everything the call's audio goes through.
pub(crate) struct Run {
    pub rtc: Rtc,
    pub socket: UdpSocket,
    pub local: SocketAddr,
    /// The track the caller's packets go out on, and its payload type; none where the peer
    /// only receives.
    pub send: Option<(Mid, Pt)>,
    pub coder: Coder,
    pub heard: mpsc::UnboundedSender<Audio>,
    pub stats: Arc<Mutex<NetStats>>,
    /// Told once when ICE and DTLS are done (when each was), or why not.
    pub up: Option<oneshot::Sender<Result<(Instant, Instant), CallError>>>,
    pub ice_at: Option<Instant>,
    pub last_seq: Option<u64>,
}

impl Run {
    /// A peer's task over `rtc` on `socket`: it sends nothing and tells no one when it is
    /// up, until `send` and `up` say otherwise.
    pub(crate) fn new(
        rtc: Rtc,
        socket: UdpSocket,
        local: SocketAddr,
        coder: Coder,
        heard: mpsc::UnboundedSender<Audio>,
        stats: Arc<Mutex<NetStats>>,
    ) -> Run {
        Run {
            rtc,
            socket,
            local,
            send: None,
            coder,
            heard,
            stats,
            up: None,
            ice_at: None,
            last_seq: None,
        }
    }

    /// Runs the peer until the caller hangs up (`frames` closed) or the call ends; `control`
    /// is what the signaling brings meanwhile.
    pub(crate) async fn go(
        mut self,
        mut frames: mpsc::Receiver<(Vec<u8>, u64)>,
        mut control: Option<mpsc::UnboundedReceiver<Control>>,
    ) {
        let mut buf = vec![0u8; 2000];
        loop {
            let deadline = match self.drain().await {
                Ok(Some(d)) => d,
                Ok(None) => {
                    return self.end(CallError::new(
                        "media",
                        "the bot's side of the call went away (it closed its peer connection)",
                    ))
                }
                Err(e) => return self.end(e),
            };
            let now = tokio::time::Instant::now();
            let wait = deadline.saturating_duration_since(Instant::now());
            let step = tokio::select! {
                r = self.socket.recv_from(&mut buf) => match r {
                    Ok((n, source)) => self.received(&buf[..n], source),
                    Err(e) => Err(CallError::new("media", format!("the call's UDP socket: {e}"))),
                },
                _ = tokio::time::sleep_until(now + wait) => {
                    self.rtc.handle_input(Input::Timeout(Instant::now())).map_err(rtc_error)
                }
                f = frames.recv() => match f {
                    Some((packet, at_ms)) => self.write(packet, at_ms),
                    None => return self.close().await,
                },
                c = async { control.as_mut()?.recv().await }, if control.is_some() => match c {
                    Some(c) => self.control(c),
                    None => { control = None; Ok(()) }
                },
            };
            if let Err(e) = step {
                return self.end(e);
            }
        }
    }

    /// The caller hung up: RTCP BYE and DTLS close_notify sent (for at most 500 ms), so
    /// the bot ends its side now rather than when its consent checks run out.
    async fn close(mut self) {
        if self.rtc.close().is_err() {
            return;
        }
        let limit = Instant::now() + Duration::from_millis(500);
        while let Ok(Some(deadline)) = self.drain().await {
            let now = Instant::now();
            if now >= limit {
                return;
            }
            tokio::time::sleep(deadline.min(limit).saturating_duration_since(now)).await;
            if self
                .rtc
                .handle_input(Input::Timeout(Instant::now()))
                .is_err()
            {
                return;
            }
        }
    }

    fn end(mut self, e: CallError) {
        match self.up.take() {
            Some(up) => {
                let _ = up.send(Err(e));
            }
            None => {
                let _ = self.heard.send(Audio::Ended(e));
            }
        }
    }

    fn received(&mut self, data: &[u8], source: SocketAddr) -> Result<(), CallError> {
        match Receive::new(Protocol::Udp, source, self.local, data) {
            Ok(r) => self
                .rtc
                .handle_input(Input::Receive(Instant::now(), r))
                .map_err(rtc_error),
            Err(_) => Ok(()), // not a datagram str0m speaks: ignored, as a browser would
        }
    }

    /// The caller's frame on the wire; dropped until the call is connected.
    fn write(&mut self, packet: Vec<u8>, at_ms: u64) -> Result<(), CallError> {
        if self.up.is_some() {
            return Ok(());
        }
        let Some((mid, pt)) = self.send else {
            return Ok(());
        };
        let t = self.coder.stamp(at_ms);
        let Some(w) = self.rtc.writer(mid) else {
            return Ok(());
        };
        w.write(pt, Instant::now(), t, packet).map_err(rtc_error)
    }

    fn control(&mut self, c: Control) -> Result<(), CallError> {
        match c {
            Control::Candidate(c) => self.rtc.add_remote_candidate(c),
            Control::Offer(sdp, answer) => {
                let said = SdpOffer::from_sdp_string(&sdp)
                    .map_err(|e| {
                        CallError::new(
                            "sdp",
                            format!(
                                "the offer's SDP does not parse ({})",
                                one_line(&e.to_string())
                            ),
                        )
                    })
                    .and_then(|o| {
                        self.rtc.sdp_api().accept_offer(o).map_err(|e| {
                            CallError::new("sdp", format!("the offer was refused ({e})"))
                        })
                    })
                    .map(|a| a.to_sdp_string());
                let _ = answer.send(said);
            }
        }
        Ok(())
    }

    /// Everything str0m has to say, until it asks to be woken; None once it is closed.
    async fn drain(&mut self) -> Result<Option<Instant>, CallError> {
        loop {
            if !self.rtc.is_alive() {
                return Ok(None);
            }
            match self.rtc.poll_output().map_err(rtc_error)? {
                Output::Timeout(t) => return Ok(Some(t)),
                Output::Transmit(t) => {
                    // A send that fails (a route the bot's candidate lacks) is ICE's to retry.
                    let _ = self.socket.send_to(&t.contents, t.destination).await;
                }
                Output::Event(e) => self.event(e)?,
            }
        }
    }

    fn event(&mut self, e: Event) -> Result<(), CallError> {
        match e {
            Event::IceConnectionStateChange(
                IceConnectionState::Connected | IceConnectionState::Completed,
            ) => {
                self.ice_at.get_or_insert_with(Instant::now);
            }
            Event::IceConnectionStateChange(IceConnectionState::Disconnected) => {
                return Err(match self.up {
                    Some(_) => CallError::new("ice", "ICE failed: no candidate pair answered (is the bot's candidate reachable from 127.0.0.1?)"),
                    None => CallError::new("media", "the bot's side of the call went away (ICE disconnected)"),
                });
            }
            Event::Connected => {
                let now = Instant::now();
                let ice = *self.ice_at.get_or_insert(now);
                if let Some(up) = self.up.take() {
                    let _ = up.send(Ok((ice, now)));
                }
            }
            Event::MediaData(d) => {
                self.count(**d.seq_range.start(), **d.seq_range.end());
                if let Some(lane) = &self.coder.lane {
                    lane.decode(d.data, Instant::now(), &self.heard);
                }
            }
            Event::MediaIngressStats(s) => {
                let mut st = self.stats.lock().unwrap_or_else(|p| p.into_inner());
                st.jitter_ms = s.jitter as f64 / 48.0;
            }
            Event::MediaEgressStats(s) => {
                if let Some(r) = s.remote {
                    let mut st = self.stats.lock().unwrap_or_else(|p| p.into_inner());
                    st.lost_by_bot = r.packets_lost;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Packets received, and the gaps in their sequence since the last.
    fn count(&mut self, first: u64, last: u64) {
        let mut st = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        st.packets += 1;
        if let Some(prev) = self.last_seq {
            st.lost += first.saturating_sub(prev + 1);
        }
        self.last_seq = Some(self.last_seq.map_or(last, |p| p.max(last)));
    }
}

/// str0m's error in one line, the DTLS handshake's named as such.
pub(crate) fn rtc_error(e: str0m::RtcError) -> CallError {
    let text = one_line(&e.to_string());
    let lower = text.to_lowercase();
    match lower.contains("fingerprint") || lower.contains("dtls") {
        true => CallError::new("dtls", format!("DTLS failed: {text} (the bot's certificate is not the one its answer's fingerprint names, or the handshake broke)")),
        false => CallError::new("media", format!("WebRTC: {text}")),
    }
}

/// A parser's many-line message on one line, without its pointers.
pub(crate) fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("PointerOffset"))
        .collect::<Vec<_>>()
        .join("; ")
}
