//! A call into a LiveKit room, as LiveKit's client SDKs place one on `/rtc`: the room made
//! and joined (`enter`), the caller's microphone announced (`AddTrack`) and offered on the
//! publisher connection, the server's offers answered on the subscriber connection (the
//! agent's voice comes on it once the agent publishes), the candidates both trickle routed
//! to their connection, and the room left and closed at hang-up. Each connection is a
//! peer's task of its own (`run::Run`); the signal connection is this module's.

use super::join::Signal;
use super::server::Server;
use super::{api, room};
use crate::codec::Coder;
use crate::decode::{Audio, Backlog};
use crate::error::CallError;
use crate::peer::{self, Line, Session, Setup};
use crate::place::{Dispatch, Join, Place};
use crate::run::{Control, NetStats, Run};
use livekit_protocol as proto;
use proto::signal_request::Message as Out;
use proto::signal_response::Message as In;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use str0m::media::Direction;
use str0m::Candidate;
use tokio::sync::{mpsc, oneshot};

/// The caller's microphone track, as its offer and its `AddTrack` name it.
const TRACK: &str = "plimsoll-caller";

/// Places a call into a LiveKit room: the publisher connected, the subscriber answered as
/// the server offers it.
pub(crate) async fn open(c: &Place<'_>, join: &Join) -> Result<(Line, Setup), CallError> {
    let began = Instant::now();
    let server = Server {
        url: c.url.to_string(),
        key: join.key.clone(),
        secret: join.secret.clone(),
    };
    let entered = room::enter(
        &server,
        &join.dispatch,
        &join.room,
        &join.identity,
        c.connect_timeout,
    )
    .await?;
    let mut signal = entered.signal;
    let (published, early) = publish(&mut signal, c, began).await?;
    let signaling = began.elapsed();
    let (frames, frames_rx) = mpsc::channel(8);
    let (heard_tx, heard) = mpsc::unbounded_channel();
    let stats = Arc::new(Mutex::new(NetStats::default()));
    let (up, connected) = oneshot::channel();
    let (pub_ctl, pub_rx) = mpsc::unbounded_channel();
    let publisher = Run {
        up: Some(up),
        ..published.run(c, heard_tx.clone(), stats.clone())?
    };
    let publisher = tokio::spawn(publisher.go(frames_rx, Some(pub_rx)));
    let (ready_tx, agent_ready) = oneshot::channel();
    let backlog = Backlog::default();
    let router = Router {
        signal,
        server,
        room: join.room.clone(),
        pub_ctl,
        sub: None,
        waiting: Vec::new(),
        agent: Agent {
            me: join.identity.clone(),
            joined: None,
            subscribed: false,
            voiced: false,
            tell: Some(ready_tx),
        },
        heard: heard_tx,
        stats: stats.clone(),
        rate: c.rate,
        frame: c.frame,
        decoding: c.decoding.clone(),
        backlog: backlog.clone(),
    };
    let task = tokio::spawn(router.go(early, publisher));
    let answered = Instant::now();
    let ((ice_at, dtls_at), (agent_at, joined_at)) =
        match up_and_heard(c, join, connected, agent_ready).await {
            Ok(at) => at,
            Err(e) => {
                task.abort();
                return Err(e);
            }
        };
    let setup = Setup {
        signaling,
        ice: ice_at.saturating_duration_since(answered),
        dtls: dtls_at.saturating_duration_since(ice_at),
        agent: Some(agent_at.saturating_duration_since(began)),
        agent_joined: joined_at.map(|t| t.saturating_duration_since(began)),
    };
    Ok((
        Line {
            frames,
            heard,
            backlog,
            stats,
            task,
            session: Session(None),
        },
        setup,
    ))
}

/// When ICE and DTLS were done on the publisher connection, and when the agent was ready:
/// subscribed to the caller's track and its own voice published. The caller speaks only
/// then: the server forwards nothing to the agent before it has subscribed, an agent
/// still starting its session (its voice not yet published) drops what it is sent, and a
/// turn whose start is cut off loses its words.
async fn up_and_heard(
    c: &Place<'_>,
    join: &Join,
    connected: oneshot::Receiver<Result<(Instant, Instant), CallError>>,
    agent_ready: oneshot::Receiver<Ready>,
) -> Result<((Instant, Instant), Ready), CallError> {
    let at = match tokio::time::timeout(c.connect_timeout, connected).await {
        Ok(Ok(at)) => at?,
        Ok(Err(_)) => return Err(CallError::new("ice", "the call's publisher stopped before it connected")),
        Err(_) => return Err(CallError::new("ice", format!("livekit: ICE and DTLS not done {} ms after the answer (is the server's candidate reachable from 127.0.0.1? set its rtc.node_ip)", c.connect_timeout.as_millis()))),
    };
    match tokio::time::timeout(c.connect_timeout, agent_ready).await {
        Ok(Ok(ready)) => Ok((at, ready)),
        Ok(Err(_)) => Err(CallError::new(
            "media",
            format!(
                "livekit: the call in room {} ended before its agent was ready",
                join.room
            ),
        )),
        Err(_) => Err(no_agent(c, join)),
    }
}

/// The publisher connection, its offer answered.
struct Published {
    rtc: str0m::Rtc,
    socket: tokio::net::UdpSocket,
    local: std::net::SocketAddr,
    mid: str0m::media::Mid,
    pt: str0m::media::Pt,
}

impl Published {
    fn run(
        self,
        c: &Place<'_>,
        heard: mpsc::UnboundedSender<Audio>,
        stats: Arc<Mutex<NetStats>>,
    ) -> Result<Run, CallError> {
        // The publisher sends only: no decoder, no lane.
        let coder = Coder::sending(c.frame);
        Ok(Run {
            send: Some((self.mid, self.pt)),
            ..Run::new(self.rtc, self.socket, self.local, coder, heard, stats)
        })
    }
}

/// The caller's microphone announced and offered; the server's answer taken, and what
/// else the server said before it (for the router).
async fn publish(
    signal: &mut Signal,
    c: &Place<'_>,
    began: Instant,
) -> Result<(Published, Vec<In>), CallError> {
    signal.send(Out::AddTrack(proto::AddTrackRequest {
        cid: TRACK.into(),
        name: "microphone".into(),
        r#type: proto::TrackType::Audio as i32,
        source: proto::TrackSource::Microphone as i32,
        ..Default::default()
    }));
    let (mut rtc, socket, local, mid, offer, pending) =
        peer::offerer(Direction::SendOnly, Some(TRACK)).await?;
    signal.send(Out::Offer(description("offer", offer.to_sdp_string(), 1)));
    let mut early = Vec::new();
    let answer = loop {
        let left = c.connect_timeout.saturating_sub(began.elapsed());
        match tokio::time::timeout(left, signal.incoming.recv()).await {
            Ok(Some(In::Answer(sd))) => break sd.sdp,
            Ok(Some(In::Trickle(t))) if t.target == proto::SignalTarget::Publisher as i32 => {
                if let Some(cand) = candidate(&t) {
                    rtc.add_remote_candidate(cand);
                }
            }
            Ok(Some(In::Leave(l))) => return Err(left_room(&l)),
            Ok(Some(m)) => early.push(m),
            Ok(None) => {
                return Err(CallError::new(
                    "signaling",
                    "livekit: the signal connection closed before the publisher's answer",
                ))
            }
            Err(_) => {
                return Err(CallError::new(
                    "timeout",
                    format!(
                        "livekit: no answer to the caller's offer within {} ms",
                        c.connect_timeout.as_millis()
                    ),
                ))
            }
        }
    };
    let pt = peer::accept(&mut rtc, mid, pending, &answer, "livekit")?;
    Ok((
        Published {
            rtc,
            socket,
            local,
            mid,
            pt,
        },
        early,
    ))
}

fn description(kind: &str, sdp: String, id: u32) -> proto::SessionDescription {
    proto::SessionDescription {
        r#type: kind.into(),
        sdp,
        id,
        ..Default::default()
    }
}

/// A trickled candidate (`{"candidate": "candidate:…", …}`) the caller's IPv4 socket reaches.
fn candidate(t: &proto::TrickleRequest) -> Option<Candidate> {
    let v: serde_json::Value = serde_json::from_str(&t.candidate_init).ok()?;
    let c = Candidate::from_sdp_string(v["candidate"].as_str()?).ok()?;
    c.addr().is_ipv4().then_some(c)
}

/// No one in the room took the caller's track within the timeout.
fn no_agent(c: &Place<'_>, join: &Join) -> CallError {
    let whose = match &join.dispatch {
        Dispatch::Named(a) => format!("a worker registered as agent \"{a}\""),
        Dispatch::Automatic => "a worker with no agent name (automatic dispatch)".to_string(),
    };
    CallError::new(
        "timeout",
        format!(
            "livekit: no agent was ready in room {} within {} ms (subscribed to the caller, its own voice published): is {whose} connected to {}? (a worker at its load_threshold takes no job)",
            join.room,
            c.connect_timeout.as_millis(),
            c.url
        ),
    )
}

fn left_room(l: &proto::LeaveRequest) -> CallError {
    CallError::new(
        "media",
        format!(
            "livekit: the server ended the caller's part in the room ({})",
            super::join::reason(l.reason)
        ),
    )
}

/// The agent as the caller learns of it: in the room once another participant is (LiveKit
/// dispatched it and its job connected), ready once it has subscribed to the caller's
/// track and published an audio track of its own.
struct Agent {
    /// The caller's identity: its own tracks are not the agent's.
    me: String,
    joined: Option<Instant>,
    subscribed: bool,
    voiced: bool,
    /// Told when the agent is first ready: then, and when it joined.
    tell: Option<oneshot::Sender<Ready>>,
}

/// When the agent was ready in the room, and when it joined it.
type Ready = (Instant, Option<Instant>);

impl Agent {
    fn heard(&mut self) {
        self.subscribed = true;
        self.ready();
    }

    fn seen(&mut self, people: &[proto::ParticipantInfo]) {
        let audio = proto::TrackType::Audio as i32;
        let mut others = people.iter().filter(|p| p.identity != self.me).peekable();
        if self.joined.is_none() && others.peek().is_some() {
            self.joined = Some(Instant::now());
        }
        self.voiced |= others.any(|p| p.tracks.iter().any(|t| t.r#type == audio));
        self.ready();
    }

    fn ready(&mut self) {
        if self.subscribed && self.voiced {
            if let Some(tell) = self.tell.take() {
                let _ = tell.send((Instant::now(), self.joined));
            }
        }
    }
}

/// The subscriber connection, once the server has offered it.
struct Sub {
    ctl: mpsc::UnboundedSender<Control>,
    task: tokio::task::JoinHandle<()>,
    /// Held while the call goes on: the subscriber sends nothing, and ends when it closes.
    _frames: mpsc::Sender<(Vec<u8>, u64)>,
}

/// The signal connection while the call goes on.
struct Router {
    signal: Signal,
    server: Server,
    room: String,
    pub_ctl: mpsc::UnboundedSender<Control>,
    sub: Option<Sub>,
    /// The subscriber's candidates trickled before its first offer.
    waiting: Vec<Candidate>,
    /// Whether the agent is in the room and ready.
    agent: Agent,
    heard: mpsc::UnboundedSender<Audio>,
    stats: Arc<Mutex<NetStats>>,
    rate: u32,
    frame: Duration,
    decoding: crate::Decoding,
    /// The subscriber's packets waiting to be decoded (the agent's voice comes on the
    /// subscriber connection): the caller's line reads it.
    backlog: Backlog,
}

impl Router {
    async fn go(mut self, early: Vec<In>, mut publisher: tokio::task::JoinHandle<()>) {
        for m in early {
            if let Err(e) = self.said(m).await {
                let _ = self.heard.send(Audio::Ended(e));
            }
        }
        loop {
            let m = tokio::select! {
                m = self.signal.incoming.recv() => m,
                _ = &mut publisher => break,
            };
            let step = match m {
                Some(m) => self.said(m).await,
                None => Err(CallError::new(
                    "media",
                    "livekit: the signal connection closed mid-call",
                )),
            };
            if let Err(e) = step {
                let _ = self.heard.send(Audio::Ended(e));
                break;
            }
        }
        self.signal.leave().await;
        if let Some(sub) = self.sub.take() {
            drop(sub._frames);
            let _ = tokio::time::timeout(Duration::from_millis(300), sub.task).await;
        }
        let _ = api::delete_room(&self.server, &self.room).await;
    }

    /// One message from the server, while the call goes on.
    async fn said(&mut self, m: In) -> Result<(), CallError> {
        match m {
            In::Trickle(t) => {
                let Some(c) = candidate(&t) else {
                    return Ok(());
                };
                if t.target == proto::SignalTarget::Publisher as i32 {
                    let _ = self.pub_ctl.send(Control::Candidate(c));
                } else if let Some(sub) = &self.sub {
                    let _ = sub.ctl.send(Control::Candidate(c));
                } else {
                    self.waiting.push(c);
                }
            }
            In::Offer(sd) => self.answer(sd).await?,
            In::TrackSubscribed(_) => self.agent.heard(),
            In::Update(u) => self.agent.seen(&u.participants),
            In::Leave(l) => return Err(left_room(&l)),
            _ => {}
        }
        Ok(())
    }

    /// The server's offer on the subscriber connection answered (the connection made on the first).
    async fn answer(&mut self, sd: proto::SessionDescription) -> Result<(), CallError> {
        if self.sub.is_none() {
            let (rtc, socket, local) = peer::on_loopback().await?;
            let (ctl, ctl_rx) = mpsc::unbounded_channel();
            let (frames, frames_rx) = mpsc::channel(1);
            let coder = Coder::new(self.rate, self.frame, &self.decoding, self.backlog.clone())?;
            let run = Run::new(
                rtc,
                socket,
                local,
                coder,
                self.heard.clone(),
                self.stats.clone(),
            );
            let task = tokio::spawn(run.go(frames_rx, Some(ctl_rx)));
            self.sub = Some(Sub {
                ctl,
                task,
                _frames: frames,
            });
        }
        let Some(sub) = &self.sub else { return Ok(()) };
        let (tx, rx) = oneshot::channel();
        let _ = sub.ctl.send(Control::Offer(sd.sdp, tx));
        for c in self.waiting.drain(..) {
            let _ = sub.ctl.send(Control::Candidate(c));
        }
        let sdp = rx
            .await
            .map_err(|_| CallError::new("media", "livekit: the subscriber connection stopped"))??;
        self.signal
            .send(Out::Answer(description("answer", sdp, sd.id)));
        Ok(())
    }
}
