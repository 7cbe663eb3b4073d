//! One HTTP request of a session: sent on the session's kept connection, the reply
//! gathered with the time each read arrived (so a stream's first token and end can be
//! timed afterwards), stopped early at a stream's `done_event`; and the status judged.
//! Building the request from a template is the caller's business (`sequence`, `chat`).

use crate::http::{Conn, HttpError};
use crate::run::Failure;
use crate::stream::{self, EventMatch};
use bytes::Bytes;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

/// A reply as it came: status, headers, body, and the end offset and arrival time of
/// each read.
pub(super) struct HttpReply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Vec<u8>,
    pub reads: Vec<(usize, Instant)>,
    /// When the reply ended: its last read, or the event that ended the stream.
    pub done: Instant,
}

impl HttpReply {
    /// When the event ending at `offset` arrived.
    pub fn arrival(&self, offset: usize) -> Option<Instant> {
        stream::arrival(&self.reads, offset)
    }
}

/// Where and how to send one request.
pub(super) struct Outgoing<'a> {
    pub addr: SocketAddr,
    pub method: &'a str,
    pub path: &'a str,
    pub headers: &'a [(String, String)],
    pub body: Vec<u8>,
    pub timeout_ms: u64,
    /// Stop reading at the first event that matches (a stream that stays open).
    pub done_event: Option<&'a EventMatch>,
    /// A slow consumer: read the reply at most this many bytes a second.
    pub pace_bps: Option<f64>,
}

pub(super) async fn send(o: Outgoing<'_>, conn: &mut Option<Conn>) -> Result<HttpReply, Failure> {
    if conn.as_ref().is_none_or(|c| c.addr() != o.addr) {
        *conn = Some(Conn::new(o.addr));
    }
    let c = conn.as_mut().expect("set above");
    c.set_pace(o.pace_bps);
    let mut body = Vec::new();
    let mut reads = Vec::new();
    let mut done_at = None;
    // Where the events already looked at end: each read parses only what is new.
    let mut checked = 0usize;
    let fut = c.request(
        o.method,
        o.path,
        o.headers,
        Bytes::from(o.body),
        |at, data| {
            body.extend_from_slice(data);
            reads.push((body.len(), at));
            if let Some(rule) = o.done_event {
                let fresh = stream::events(&body[checked..]);
                if fresh.iter().any(|e| rule.matches(e)) {
                    done_at = Some(at);
                }
                checked += fresh.last().map_or(0, |e| e.end);
            }
            done_at.is_none()
        },
    );
    let (status, headers) =
        match tokio::time::timeout(Duration::from_millis(o.timeout_ms), fut).await {
            Err(_) => {
                *conn = None;
                return Err(Failure::new(
                    "timeout",
                    format!("no complete reply within {} ms", o.timeout_ms),
                ));
            }
            Ok(Err(HttpError::Connect(a, e))) => {
                return Err(Failure::new("connect", format!("{a}: {e}")))
            }
            Ok(Err(e)) => {
                *conn = None;
                return Err(Failure::new("protocol", e.to_string()));
            }
            Ok(Ok(s)) => s,
        };
    let done = done_at
        .or(reads.last().map(|r| r.1))
        .unwrap_or_else(Instant::now);
    Ok(HttpReply {
        status,
        headers,
        body,
        reads,
        done,
    })
}

/// The status a request expects (any 2xx when none is given), or an error quoting the body.
pub(super) fn status_ok(reply: &HttpReply, expect: Option<u16>) -> Result<(), Failure> {
    let ok = match expect {
        Some(want) => reply.status == want,
        None => (200..300).contains(&reply.status),
    };
    if ok {
        return Ok(());
    }
    let expected = expect.map_or("a 2xx".to_string(), |s| s.to_string());
    Err(crate::run::failure::status(
        reply.status,
        &expected,
        &reply.body,
    ))
}
