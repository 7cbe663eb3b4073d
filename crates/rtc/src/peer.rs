//! One call's peer: a UDP socket on loopback, a str0m `Rtc` that offers one Opus audio
//! track both ways, and the task that runs it — datagrams in and out, str0m's timers, the
//! caller's packets (coded ahead, `encode`) written on the RTP clock, the bot's packets decoded and
//! handed to the call, the network's figures (packets, gaps in their sequence, jitter as
//! RTCP reports it) kept as they come.

use crate::codec::Coder;
use crate::signal::{self, Signaling};
use crate::CallError;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use str0m::change::{SdpAnswer, SdpOffer, SdpPendingOffer};
use str0m::format::Codec;
use str0m::media::{Direction, MediaKind, Mid, Pt};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};

/// What the bot's side of the call gave: audio at the call's rate, or the call's end.
#[derive(Debug)]
pub enum Audio {
    Samples(Vec<f32>),
    Ended(CallError),
}

/// How long each part of placing the call took.
#[derive(Clone, Copy, Debug, Default)]
pub struct Setup {
    /// The offer sent and the answer read (HTTP).
    pub signaling: Duration,
    /// From the answer to ICE connected.
    pub ice: Duration,
    /// From ICE connected to DTLS done and SRTP keyed.
    pub dtls: Duration,
}

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

/// The caller's end of a call in progress.
pub struct Line {
    /// One frame of the caller's audio as an Opus packet (`encode`, `silence`), every
    /// frame time, with when it was due (ms since the call began): its RTP time follows
    /// the wall clock.
    pub frames: mpsc::Sender<(Vec<u8>, u64)>,
    /// The bot's audio as it is decoded, and the call's end.
    pub heard: mpsc::UnboundedReceiver<Audio>,
    pub stats: Arc<Mutex<NetStats>>,
    task: tokio::task::JoinHandle<()>,
    session: Session,
}

impl Line {
    /// Hangs up: the peer closed (RTCP BYE and DTLS close_notify sent), a WHIP session
    /// deleted.
    pub async fn hang_up(mut self) {
        drop(self.frames);
        if tokio::time::timeout(Duration::from_millis(500), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
        if let Some((url, headers)) = self.session.0.take() {
            signal::hang_up(&url, &headers).await;
        }
    }
}

/// A WHIP session to delete: at hang-up, or when the call fails or is dropped before it.
struct Session(Option<(String, Vec<(String, String)>)>);

impl Drop for Session {
    fn drop(&mut self) {
        if let (Some((url, headers)), Ok(rt)) =
            (self.0.take(), tokio::runtime::Handle::try_current())
        {
            rt.spawn(async move { signal::hang_up(&url, &headers).await });
        }
    }
}

/// Where a call is going and how it is placed.
pub struct Place<'a> {
    pub how: Signaling,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    /// The call's audio rate (Opus codes at 8, 12, 16, 24 or 48 kHz).
    pub rate: u32,
    /// Frame length: the RTP clock advances this much a frame.
    pub frame: Duration,
    /// ICE and DTLS must be done this long after the answer.
    pub connect_timeout: Duration,
}

/// A peer on loopback with its offer: one host candidate, one Opus track each way.
async fn offerer() -> Result<(Rtc, UdpSocket, SocketAddr, Mid, SdpOffer, SdpPendingOffer), CallError>
{
    let socket = UdpSocket::bind("127.0.0.1:0")
        .await
        .map_err(|e| CallError::new("ice", format!("no UDP socket on loopback: {e}")))?;
    let local = socket
        .local_addr()
        .map_err(|e| CallError::new("ice", e.to_string()))?;
    let mut rtc = Rtc::builder()
        .clear_codecs()
        .enable_opus(true, false)
        .set_rtcp_report_interval_audio(Duration::from_secs(1))
        .set_stats_interval(Some(Duration::from_secs(1)))
        .build(Instant::now());
    let c = Candidate::host(local, "udp").map_err(|e| CallError::new("ice", e.to_string()))?;
    rtc.add_local_candidate(c);
    let mut api = rtc.sdp_api();
    let mid = api.add_media(MediaKind::Audio, Direction::SendRecv, None, None, None);
    let (offer, pending) = api
        .apply()
        .ok_or_else(|| CallError::new("sdp", "no offer made"))?;
    Ok((rtc, socket, local, mid, offer, pending))
}

/// The bot's answer taken: the payload type its Opus track goes out on.
fn accept(
    rtc: &mut Rtc,
    mid: Mid,
    pending: SdpPendingOffer,
    sdp: &str,
    url: &str,
) -> Result<Pt, CallError> {
    let parsed = SdpAnswer::from_sdp_string(&ipv4_only(sdp)).map_err(|e| {
        CallError::new(
            "sdp",
            format!(
                "{url}: the answer's SDP does not parse ({})",
                one_line(&e.to_string())
            ),
        )
    })?;
    rtc.sdp_api()
        .accept_answer(pending, parsed)
        .map_err(|e| CallError::new("sdp", format!("{url}: the answer was refused ({e})")))?;
    opus_pt(rtc, mid).ok_or_else(|| {
        CallError::new("sdp", format!("{url}: the answer has no Opus audio track (opus/48000/2 was offered); a WebRTC voice bot answers with one"))
    })
}

/// Places a call: the offer signalled, the answer taken, ICE and DTLS done.
pub async fn open(p: &Place<'_>) -> Result<(Line, Setup), CallError> {
    let (mut rtc, socket, local, mid, offer, pending) = offerer().await?;
    let began = Instant::now();
    let answer = signal::offer(p.how, p.url, p.headers, &offer.to_sdp_string()).await?;
    let signaling = began.elapsed();
    // Deleted if the call goes no further, as at its hang-up.
    let session = Session(answer.session.clone().map(|s| (s, p.headers.to_vec())));
    let pt = accept(&mut rtc, mid, pending, &answer.sdp, p.url)?;
    let (frames, frames_rx) = mpsc::channel(8);
    let (heard_tx, heard) = mpsc::unbounded_channel();
    let stats = Arc::new(Mutex::new(NetStats::default()));
    let (up, connected) = oneshot::channel();
    let run = Run {
        rtc,
        socket,
        local,
        mid,
        pt,
        coder: Coder::new(p.rate, p.frame)?,
        heard: heard_tx,
        stats: stats.clone(),
        up: Some(up),
        ice_at: None,
        last_seq: None,
    };
    let task = tokio::spawn(run.go(frames_rx));
    let answered = Instant::now();
    let (ice_at, dtls_at) = match tokio::time::timeout(p.connect_timeout, connected).await {
        Ok(Ok(Ok(at))) => at,
        Ok(Ok(Err(e))) => return Err(e),
        Ok(Err(_)) => {
            return Err(CallError::new(
                "ice",
                "the call's peer stopped before it connected",
            ))
        }
        Err(_) => {
            task.abort();
            return Err(CallError::new("ice", format!("{}: ICE and DTLS not done {} ms after the answer (is the bot's candidate reachable from 127.0.0.1?)", p.url, p.connect_timeout.as_millis())));
        }
    };
    let setup = Setup {
        signaling,
        ice: ice_at.saturating_duration_since(answered),
        dtls: dtls_at.saturating_duration_since(ice_at),
    };
    let line = Line {
        frames,
        heard,
        stats,
        task,
        session,
    };
    Ok((line, setup))
}

/// The answer's SDP without candidates the caller cannot reach from its IPv4 socket.
fn ipv4_only(sdp: &str) -> String {
    sdp.split("\r\n")
        .flat_map(|l| l.split('\n'))
        .filter(|l| {
            !l.starts_with("a=candidate:")
                || l.split_whitespace()
                    .nth(4)
                    .is_some_and(|a| !a.contains(':'))
        })
        .map(|l| format!("{}\r\n", l.trim_end_matches('\r')))
        .collect::<String>()
        .trim_end()
        .to_string()
        + "\r\n"
}

/// A parser's many-line message on one line, without its pointers.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("PointerOffset"))
        .collect::<Vec<_>>()
        .join("; ")
}

fn opus_pt(rtc: &mut Rtc, mid: Mid) -> Option<Pt> {
    let w = rtc.writer(mid)?;
    let pt = w
        .payload_params()
        .find(|p| p.spec().codec == Codec::Opus)
        .map(|p| p.pt());
    pt
}

/// The peer's task: everything the call's audio goes through.
struct Run {
    rtc: Rtc,
    socket: UdpSocket,
    local: SocketAddr,
    mid: Mid,
    pt: Pt,
    coder: Coder,
    heard: mpsc::UnboundedSender<Audio>,
    stats: Arc<Mutex<NetStats>>,
    /// Told once when ICE and DTLS are done (when each was), or why not.
    up: Option<oneshot::Sender<Result<(Instant, Instant), CallError>>>,
    ice_at: Option<Instant>,
    last_seq: Option<u64>,
}

impl Run {
    async fn go(mut self, mut frames: mpsc::Receiver<(Vec<u8>, u64)>) {
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
        let t = self.coder.stamp(at_ms);
        let Some(w) = self.rtc.writer(self.mid) else {
            return Ok(());
        };
        w.write(self.pt, Instant::now(), t, packet)
            .map_err(rtc_error)
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
                let samples = self.coder.decode(&d.data)?;
                let _ = self.heard.send(Audio::Samples(samples));
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
fn rtc_error(e: str0m::RtcError) -> CallError {
    let text = one_line(&e.to_string());
    let lower = text.to_lowercase();
    match lower.contains("fingerprint") || lower.contains("dtls") {
        true => CallError::new("dtls", format!("DTLS failed: {text} (the bot's certificate is not the one its answer's fingerprint names, or the handshake broke)")),
        false => CallError::new("media", format!("WebRTC: {text}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_keeps_only_candidates_an_ipv4_socket_reaches() {
        let sdp = "v=0\r\na=candidate:1 1 udp 1 192.0.2.2 5000 typ host\r\na=candidate:2 1 udp 1 fd00::2 5001 typ host\r\na=end-of-candidates\r\n";
        let kept = ipv4_only(sdp);
        assert!(
            kept.contains("192.0.2.2 5000") && !kept.contains("fd00::2"),
            "{kept}"
        );
        assert!(kept.ends_with("a=end-of-candidates\r\n"), "{kept}");
    }
}
