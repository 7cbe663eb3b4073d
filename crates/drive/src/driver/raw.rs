//! A raw socket session (`protocol = "tcp"` or `"unix"`): one connection per session,
//! each turn one frame out and one frame back, framed by lines, a big-endian u32 length
//! or NUL; with `encoding = "msgpack"` a JSON body goes out as MessagePack and the reply
//! is read back as JSON, so checks and extracts read it as they read any JSON reply.
//! Cutting frames is `framed`'s business; the turn loop is `talk`'s.

use super::talk::{Link, Reply, Turn};
use crate::address;
use crate::checks::reply_json;
use crate::framed::{self, Reader, Writer};
use crate::run::Failure;
use crate::spec::Wire;

type Socket = (Reader, Writer);

/// A session's socket, opened by its first turn, and how it frames and encodes.
pub(super) struct RawLink {
    socket: Option<Socket>,
    wire: Wire,
}

impl RawLink {
    pub fn new(wire: Wire) -> RawLink {
        RawLink { socket: None, wire }
    }
}

impl Link for RawLink {
    async fn turn(&mut self, t: &Turn<'_>, url: String, body: String) -> Result<Reply, Failure> {
        let fut = turn(&mut self.socket, &url, self.wire, &body, t.allow_remote);
        let out = match tokio::time::timeout(t.timeout(), fut).await {
            Err(_) => {
                self.socket = None;
                return Err(Failure::new(
                    "timeout",
                    format!("no reply within {} ms", t.spec.turn_timeout_ms),
                ));
            }
            Ok(r) => r?,
        };
        Ok(Reply {
            doc: reply_json(false, &out),
            first: None,
            headers: None,
        })
    }
}

fn config(m: impl Into<String>) -> Failure {
    Failure::new("config", m.into())
}

/// The body as it goes on the wire.
fn encode(body: &str, wire: Wire) -> Result<Vec<u8>, Failure> {
    if !wire.msgpack {
        return Ok(body.as_bytes().to_vec());
    }
    let v: serde_json::Value = serde_json::from_str(body).map_err(|e| {
        config(format!("encoding = \"msgpack\" sends a JSON body as MessagePack; this body is not JSON ({e}): {body:.80}"))
    })?;
    rmp_serde::to_vec_named(&v).map_err(|e| config(format!("MessagePack: {e}")))
}

/// The reply as JSON bytes (MessagePack decoded), or as it came.
fn decode(frame: Vec<u8>, wire: Wire) -> Result<Vec<u8>, Failure> {
    if !wire.msgpack {
        return Ok(frame);
    }
    let v: serde_json::Value = rmp_serde::from_slice(&frame).map_err(|e| {
        Failure::new(
            "protocol",
            format!("the reply is not MessagePack ({e}; {} bytes)", frame.len()),
        )
    })?;
    Ok(serde_json::to_vec(&v).unwrap_or_default())
}

/// One turn: opens the session's socket if needed, writes the body, reads one frame.
async fn turn(
    socket: &mut Option<Socket>,
    url: &str,
    wire: Wire,
    body: &str,
    allow_remote: bool,
) -> Result<Vec<u8>, Failure> {
    if socket.is_none() {
        let (transport, addr) = address::socket(url).map_err(|e| config(e.to_string()))?;
        *socket = Some(framed::open(transport, wire.framing, addr, allow_remote).await?);
    }
    let (r, w) = socket.as_mut().expect("opened above");
    let sent = async {
        w.send(&encode(body, wire)?).await?;
        r.next().await
    };
    match sent.await {
        Ok(Some(frame)) => decode(frame, wire),
        Ok(None) => {
            *socket = None;
            Err(Failure::new(
                "closed",
                "the SUT closed the connection before it replied",
            ))
        }
        Err(e) => {
            *socket = None;
            Err(e)
        }
    }
}
