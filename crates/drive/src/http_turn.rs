//! One HTTP turn of a session: the request sent on the session's kept connection, the
//! reply gathered with the moment its first piece came, its status judged.

use crate::driver::TurnError;
use crate::http::{Conn, HttpError};
use crate::session::{render, SessionSpec};
use bytes::Bytes;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

/// One HTTP request/response turn: the body, when its first byte came, when it was sent.
/// `first_when` says which piece of the reply counts as its first (a content delta for a
/// chat stream, any byte otherwise).
pub(crate) async fn http_turn(
    spec: &SessionSpec,
    vars: &[(&str, &str)],
    (addr, path): (SocketAddr, &str),
    body: String,
    first_when: fn(&[u8]) -> bool,
    conn: &mut Option<Conn>,
) -> Result<(Vec<u8>, Option<Instant>, Instant), TurnError> {
    if conn.as_ref().is_none_or(|c| c.addr() != addr) {
        *conn = Some(Conn::new(addr));
    }
    let c = conn.as_mut().expect("set above");
    let headers: Vec<(String, String)> = spec
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), render(v, vars)))
        .collect();
    let sent = Instant::now();
    let mut first: Option<Instant> = None;
    let mut out = Vec::new();
    let fut = c.request(
        &spec.method,
        path,
        &headers,
        Bytes::from(body),
        |at, data| {
            if first.is_none() && first_when(data) {
                first = Some(at);
            }
            out.extend_from_slice(data);
        },
    );
    let status = match tokio::time::timeout(Duration::from_millis(spec.turn_timeout_ms), fut).await
    {
        Err(_) => {
            *conn = None;
            return Err((
                "timeout".into(),
                format!("no complete reply within {} ms", spec.turn_timeout_ms),
            ));
        }
        Ok(Err(HttpError::Connect(a, e))) => return Err(("connect".into(), format!("{a}: {e}"))),
        Ok(Err(e)) => {
            *conn = None;
            return Err(("protocol".into(), e.to_string()));
        }
        Ok(Ok(s)) => s,
    };
    let ok_status = match spec.expect_status {
        Some(want) => status == want,
        None => (200..300).contains(&status),
    };
    if !ok_status {
        let snippet: String = String::from_utf8_lossy(&out).chars().take(200).collect();
        return Err((
            format!("status_{status}"),
            format!("HTTP {status}: {snippet}"),
        ));
    }
    Ok((out, first, sent))
}
