//! One call's peer: a UDP socket on loopback, a str0m `Rtc` that offers one Opus audio
//! track both ways, and the task that runs it — datagrams in and out, str0m's timers, the
//! caller's packets (coded ahead, `encode`) written on the RTP clock, the bot's packets decoded and
//! handed to the call, the network's figures (packets, gaps in their sequence, jitter as
//! RTCP reports it) kept as they come.

use crate::codec::Coder;
use crate::decode::{Audio, Backlog};
use crate::error::CallError;
use crate::place::Place;
use crate::run::{one_line, NetStats, Run};
use crate::signal;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use str0m::change::{SdpAnswer, SdpOffer, SdpPendingOffer};
use str0m::format::Codec;
use str0m::media::{Direction, MediaKind, Mid, Pt};
use str0m::{Candidate, Rtc};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};

/// How long each part of placing the call took.
#[derive(Clone, Copy, Debug, Default)]
pub struct Setup {
    /// The offer sent and the answer read (HTTP).
    pub signaling: Duration,
    /// From the answer to ICE connected.
    pub ice: Duration,
    /// From ICE connected to DTLS done and SRTP keyed.
    pub dtls: Duration,
    /// A LiveKit room: from the call's start (the room made) to its agent there, ready
    /// (dispatched, joined, subscribed to the caller and its own voice published).
    pub agent: Option<Duration>,
    /// The same room: from the call's start to the agent in it (dispatched, its job
    /// started and connected), before it subscribed and published.
    pub agent_joined: Option<Duration>,
}

/// The caller's end of a call in progress.
pub struct Line {
    /// One frame of the caller's audio as an Opus packet (`encode`, `silence`), every
    /// frame time, with when it was due (ms since the call began): its RTP time follows
    /// the wall clock.
    pub frames: mpsc::Sender<(Vec<u8>, u64)>,
    /// The bot's audio as it is decoded, and the call's end.
    pub heard: mpsc::UnboundedReceiver<Audio>,
    /// The bot's packets still waiting to be decoded (the call's audio is complete up to
    /// the oldest's arrival).
    pub backlog: Backlog,
    pub stats: Arc<Mutex<NetStats>>,
    pub(crate) task: tokio::task::JoinHandle<()>,
    pub(crate) session: Session,
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
pub(crate) struct Session(pub Option<(String, Vec<(String, String)>)>);

impl Drop for Session {
    fn drop(&mut self) {
        if let (Some((url, headers)), Ok(rt)) =
            (self.0.take(), tokio::runtime::Handle::try_current())
        {
            rt.spawn(async move { signal::hang_up(&url, &headers).await });
        }
    }
}

/// A peer on loopback: its UDP socket, and an `Rtc` that speaks Opus with its one host
/// candidate.
pub(crate) async fn on_loopback() -> Result<(Rtc, UdpSocket, SocketAddr), CallError> {
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
    Ok((rtc, socket, local))
}

/// A peer on loopback with its offer of one Opus track, `dir` as seen by the caller, its
/// track named `track` (stream and track ids) where the signaling names tracks.
pub(crate) async fn offerer(
    dir: Direction,
    track: Option<&str>,
) -> Result<(Rtc, UdpSocket, SocketAddr, Mid, SdpOffer, SdpPendingOffer), CallError> {
    let (mut rtc, socket, local) = on_loopback().await?;
    let mut api = rtc.sdp_api();
    let ids = track.map(String::from);
    let mid = api.add_media(MediaKind::Audio, dir, ids.clone(), ids, None);
    let (offer, pending) = api
        .apply()
        .ok_or_else(|| CallError::new("sdp", "no offer made"))?;
    Ok((rtc, socket, local, mid, offer, pending))
}

/// The bot's answer taken: the payload type its Opus track goes out on.
pub(crate) fn accept(
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

/// Places a call signalled by an offer over HTTP: the offer signalled, the answer taken,
/// ICE and DTLS done.
pub(crate) async fn open(p: &Place<'_>) -> Result<(Line, Setup), CallError> {
    let (mut rtc, socket, local, mid, offer, pending) = offerer(Direction::SendRecv, None).await?;
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
    let backlog = Backlog::default();
    let run = Run {
        send: Some((mid, pt)),
        up: Some(up),
        ..Run::new(
            rtc,
            socket,
            local,
            Coder::new(p.rate, p.frame, p.decoding, backlog.clone())?,
            heard_tx,
            stats.clone(),
        )
    };
    let task = tokio::spawn(run.go(frames_rx, None));
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
        agent: None,
        agent_joined: None,
        signaling,
        ice: ice_at.saturating_duration_since(answered),
        dtls: dtls_at.saturating_duration_since(ice_at),
    };
    let line = Line {
        frames,
        heard,
        backlog,
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

fn opus_pt(rtc: &mut Rtc, mid: Mid) -> Option<Pt> {
    let w = rtc.writer(mid)?;
    let pt = w
        .payload_params()
        .find(|p| p.spec().codec == Codec::Opus)
        .map(|p| p.pt());
    pt
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
