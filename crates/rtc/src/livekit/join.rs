//! A participant's signal connection, as LiveKit's client SDKs hold it: the `/rtc`
//! WebSocket opened with the access token, `JoinResponse` read first, then
//! `SignalRequest`s out and `SignalResponse`s in (protobuf, one a binary message), a ping
//! every `ping_interval` the server asked for, and `Leave` at hang-up.

use super::server::Server;
use crate::error::CallError;
use futures_util::{SinkExt, StreamExt};
use livekit_protocol as proto;
use prost::Message as _;
use proto::signal_request::Message as Out;
use proto::signal_response::Message as In;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::{self, Message};

/// The protocol version announced: 16 is the two-connection protocol (a publisher the
/// caller offers, a subscriber the server offers) every SDK speaks on `/rtc`, with
/// `track_subscribed` sent (the server holds it back below 10 for a Rust SDK).
const PROTOCOL: u32 = 16;

/// A joined participant's signal connection.
pub(crate) struct Signal {
    out: mpsc::UnboundedSender<Out>,
    /// What the server says, in order, after the `JoinResponse`.
    pub incoming: mpsc::UnboundedReceiver<In>,
    pub joined: proto::JoinResponse,
    task: tokio::task::JoinHandle<()>,
}

impl Signal {
    pub(crate) fn send(&self, m: Out) {
        let _ = self.out.send(m);
    }

    /// Leaves the room and closes the connection (at most 500 ms).
    pub(crate) async fn leave(mut self) {
        self.send(Out::Leave(proto::LeaveRequest {
            can_reconnect: false,
            reason: proto::DisconnectReason::ClientInitiated as i32,
            ..Default::default()
        }));
        drop(self.out);
        if tokio::time::timeout(Duration::from_millis(500), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Joins with `token` (its room and identity): waits at most `timeout` for the
/// `JoinResponse`, then keeps the connection (pings, messages both ways) on a task.
pub(crate) async fn join(
    server: &Server,
    token: &str,
    timeout: Duration,
) -> Result<Signal, CallError> {
    let began = Instant::now();
    let ws = connect(server, token, timeout).await?;
    let (sink, mut stream) = ws.split();
    let said = |why: String| CallError::new("signaling", why);
    let joined = loop {
        let left = timeout.saturating_sub(began.elapsed());
        match tokio::time::timeout(left, stream.next()).await {
            Err(_) => {
                return Err(said(format!(
                    "livekit: no JoinResponse within {} ms of /rtc opening",
                    timeout.as_millis()
                )))
            }
            Ok(None | Some(Err(_))) => {
                return Err(said("livekit: /rtc closed before the JoinResponse".into()))
            }
            Ok(Some(Ok(Message::Binary(b)))) => match decode(&b) {
                Some(In::Join(j)) => break j,
                Some(In::Leave(l)) => {
                    return Err(said(format!(
                        "livekit: the server sent Leave before the join ({})",
                        reason(l.reason)
                    )))
                }
                _ => continue,
            },
            Ok(Some(Ok(_))) => continue,
        }
    };
    let (out, outgoing) = mpsc::unbounded_channel::<Out>();
    let (tell, incoming) = mpsc::unbounded_channel::<In>();
    let every = Duration::from_secs(u64::try_from(joined.ping_interval).unwrap_or(0).max(1));
    let task = tokio::spawn(pump(sink, stream, outgoing, tell, every));
    Ok(Signal {
        out,
        incoming,
        joined,
        task,
    })
}

/// The `/rtc` WebSocket opened, or why not in one line.
async fn connect(server: &Server, token: &str, timeout: Duration) -> Result<Ws, CallError> {
    let url = format!(
        "{}/rtc?access_token={token}&auto_subscribe=1&sdk=rust&protocol={PROTOCOL}&version={}",
        server.ws_base(),
        env!("CARGO_PKG_VERSION")
    );
    let said = |why: String| CallError::new("signaling", why);
    match tokio::time::timeout(timeout, tokio_tungstenite::connect_async(url.as_str())).await {
        Err(_) => Err(said(format!(
            "livekit: /rtc did not open within {} ms",
            timeout.as_millis()
        ))),
        Ok(Err(tungstenite::Error::Http(resp))) => {
            let body = resp
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            let body = body.trim().chars().take(160).collect::<String>();
            Err(said(match resp.status().as_u16() {
                401 => format!(
                    "livekit: 401 from /rtc: the token's key or secret is wrong (key \"{}\"; give the server's keys as [voice] api_key/api_secret or LIVEKIT_API_KEY/LIVEKIT_API_SECRET): {body}",
                    server.key
                ),
                s => format!("livekit: {s} from /rtc: {body}"),
            }))
        }
        Ok(Err(e)) => Err(server.unreachable(said(e.to_string()))),
        Ok(Ok((ws, _))) => Ok(ws),
    }
}

/// The connection while the call goes on: requests out, responses in, a ping every
/// `every`; at hang-up, once what was queued (the `Leave`) is sent, the close.
async fn pump(
    mut sink: futures_util::stream::SplitSink<Ws, Message>,
    mut stream: futures_util::stream::SplitStream<Ws>,
    mut outgoing: mpsc::UnboundedReceiver<Out>,
    tell: mpsc::UnboundedSender<In>,
    every: Duration,
) {
    let began = Instant::now();
    let mut ping = tokio::time::interval(every);
    loop {
        let m = tokio::select! {
            m = outgoing.recv() => match m { Some(m) => m, None => break },
            _ = ping.tick() => Out::Ping(began.elapsed().as_millis() as i64),
            m = stream.next() => match m {
                Some(Ok(Message::Binary(b))) => {
                    if let Some(m) = decode(&b) {
                        let _ = tell.send(m);
                    }
                    continue;
                }
                Some(Ok(_)) => continue,
                None | Some(Err(_)) => return,
            },
        };
        if sink.send(encode(m)).await.is_err() {
            return;
        }
    }
    let _ = sink.close().await;
}

fn encode(m: Out) -> Message {
    Message::Binary(
        proto::SignalRequest { message: Some(m) }
            .encode_to_vec()
            .into(),
    )
}

fn decode(b: &[u8]) -> Option<In> {
    proto::SignalResponse::decode(b).ok()?.message
}

/// A `DisconnectReason` as LiveKit names it.
pub(crate) fn reason(r: i32) -> String {
    proto::DisconnectReason::try_from(r)
        .map_or_else(|_| format!("reason {r}"), |d| d.as_str_name().to_string())
}
