//! The stdio server as a relay: each line read is POSTed to the running mock's `/mcp`
//! (with `x-plimsoll-mcp-stdio: PID`, so the mock counts it as stdio and knows the
//! process) and the answer written back as a line — an SSE answer's events one line
//! each, a 202 nothing. The legacy session `initialize` opened is carried like any HTTP
//! client carries it. Requests run side by side over a small pool of keep-alive
//! connections, so concurrent calls are not queued behind one another.

use crate::mcp::lines::{next_line, writer};
use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use wire::mcp::jsonrpc::{self, code, RpcError};

/// The header a relaying stdio server sends with its process id.
pub const STDIO_HEADER: &str = "x-plimsoll-mcp-stdio";

struct Upstream {
    addr: String,
    path: String,
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
    session: Mutex<Option<String>>,
}

/// `http://HOST:PORT[/prefix]` → (HOST:PORT, /prefix/mcp).
fn split(base: &str) -> anyhow::Result<(String, String)> {
    let rest = base
        .strip_prefix("http://")
        .with_context(|| format!("the mock's URL must start with http:// (got {base:?})"))?;
    let (addr, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = prefix.trim_end_matches('/');
    let path = if prefix.ends_with("mcp") {
        format!("/{prefix}")
    } else if prefix.is_empty() {
        "/mcp".into()
    } else {
        format!("/{prefix}/mcp")
    };
    Ok((addr.to_string(), path))
}

impl Upstream {
    async fn sender(&self) -> anyhow::Result<SendRequest<Full<Bytes>>> {
        loop {
            let s = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            match s {
                Some(mut s) => {
                    if s.ready().await.is_ok() {
                        return Ok(s);
                    }
                }
                None => break,
            }
        }
        let tcp = tokio::net::TcpStream::connect(&self.addr)
            .await
            .with_context(|| format!("connecting to the mock at {}", self.addr))?;
        let _ = tcp.set_nodelay(true);
        let (s, conn) = http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(s)
    }

    /// POSTs one line; the lines to write back.
    async fn send(&self, line: Vec<u8>) -> anyhow::Result<Vec<String>> {
        let mut s = self.sender().await?;
        let mut req = hyper::Request::post(&self.path)
            .header("host", &self.addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header(STDIO_HEADER, std::process::id().to_string());
        if let Some(sid) = self
            .session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            req = req.header(wire::mcp::protocol::HEADER_SESSION, sid);
        }
        let resp = s
            .send_request(req.body(Full::new(Bytes::from(line)))?)
            .await?;
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await?.to_bytes();
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(s);
        if let Some(sid) = parts
            .headers
            .get(wire::mcp::protocol::HEADER_SESSION)
            .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().unwrap_or_else(|p| p.into_inner()) = Some(sid.to_string());
        }
        let text = String::from_utf8_lossy(&bytes);
        let sse = parts
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        Ok(if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.trim().to_string())
                .collect()
        } else if text.trim().is_empty() {
            Vec::new()
        } else {
            vec![text.trim().to_string()]
        })
    }
}

/// The answer to a line the mock could not be asked about: an error under its id.
fn undelivered(line: &[u8], e: &anyhow::Error) -> Option<String> {
    match jsonrpc::parse(line) {
        Ok(jsonrpc::Message::Request { id, .. }) => Some(jsonrpc::error(
            &id,
            &RpcError::new(
                code::INTERNAL_ERROR,
                format!("plimsoll mcp --stdio: the mock did not answer: {e:#}"),
            ),
        )),
        _ => None,
    }
}

/// Relays stdin to the mock at `base` and its answers to stdout until stdin ends.
pub async fn relay<R, W>(base: &str, input: R, output: W) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (addr, path) = split(base)?;
    let up = Arc::new(Upstream {
        addr,
        path,
        idle: Mutex::new(Vec::new()),
        session: Mutex::new(None),
    });
    let (tx, written) = writer(output);
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    let mut pending = tokio::task::JoinSet::new();
    while next_line(&mut input, &mut buf).await?.is_some() {
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = std::mem::take(&mut buf);
        let (up, tx) = (up.clone(), tx.clone());
        // initialize first, alone: what follows needs the session it opens.
        let opens = line.windows(12).any(|w| w == b"\"initialize\"");
        let task = async move {
            let out = match up.send(line.clone()).await {
                Ok(lines) => lines,
                Err(e) => undelivered(&line, &e).into_iter().collect(),
            };
            for l in out {
                let _ = tx.send(l);
            }
        };
        if opens {
            task.await;
        } else {
            pending.spawn(task);
        }
    }
    while pending.join_next().await.is_some() {}
    drop(tx);
    let _ = written.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mock_url_becomes_its_mcp_endpoint() {
        let s = |b: &str| super::split(b).unwrap();
        assert_eq!(
            s("http://127.0.0.1:8700"),
            ("127.0.0.1:8700".into(), "/mcp".into())
        );
        assert_eq!(
            s("http://127.0.0.1:8700/"),
            ("127.0.0.1:8700".into(), "/mcp".into())
        );
        assert_eq!(
            s("http://127.0.0.1:8700/mcp"),
            ("127.0.0.1:8700".into(), "/mcp".into())
        );
        assert!(super::split("https://x").is_err());
    }
}
