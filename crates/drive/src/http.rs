//! A lean HTTP/1.1 client over one keep-alive connection, with a timestamp taken as
//! each read of the body arrives (time to first byte, to first event, to last).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::Request;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A slow consumer's reading schedule: what the SUT sends meanwhile waits in its buffers.
/// Timed from the first byte, so timer rounding does not add up over many reads.
pub(crate) struct Pace {
    from: Instant,
    taken: usize,
    bps: f64,
}

impl Pace {
    /// None when there is no pace (or a pace of nothing).
    pub(crate) fn new(bps: Option<f64>) -> Option<Pace> {
        bps.filter(|b| *b > 0.0).map(|bps| Pace {
            from: Instant::now(),
            taken: 0,
            bps,
        })
    }

    /// `n` more bytes were read: wait until the schedule allows them.
    pub(crate) async fn took(&mut self, n: usize) {
        self.taken += n;
        let due = self.from + std::time::Duration::from_secs_f64(self.taken as f64 / self.bps);
        tokio::time::sleep_until(due).await;
    }
}

pub struct Conn {
    addr: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
    /// A slow reader: take the body at most this many bytes a second.
    pace_bps: Option<f64>,
}

/// Why a request failed before a status came back.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("connect to {0} failed: {1}")]
    Connect(SocketAddr, std::io::Error),
    #[error("{0}")]
    Protocol(String),
}

impl Conn {
    pub fn new(addr: SocketAddr) -> Self {
        Conn {
            addr,
            sender: None,
            pace_bps: None,
        }
    }

    /// Reads replies no faster than `bps` bytes a second (None: as fast as they come).
    pub fn set_pace(&mut self, bps: Option<f64>) {
        self.pace_bps = bps.filter(|b| *b > 0.0);
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    async fn sender(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, HttpError> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let tcp = TcpStream::connect(self.addr)
                .await
                .map_err(|e| HttpError::Connect(self.addr, e))?;
            let _ = tcp.set_nodelay(true);
            let (sender, conn) = http1::handshake(TokioIo::new(tcp))
                .await
                .map_err(|e| HttpError::Protocol(e.to_string()))?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            self.sender = Some(sender);
        }
        let s = self.sender.as_mut().expect("set above");
        if s.ready().await.is_err() {
            self.sender = None;
            return Err(HttpError::Protocol("connection closed".into()));
        }
        Ok(self.sender.as_mut().expect("still set"))
    }

    /// Opens the connection now (a request opens it when needed otherwise): a
    /// benchmark times the connect apart from the reply.
    pub async fn connect(&mut self) -> Result<(), HttpError> {
        self.sender().await.map(|_| ())
    }

    /// Sends a request and hands each read of the body to `on_read` with its arrival
    /// time; `on_read` returning false stops reading (the connection is then dropped).
    /// Returns the status and the headers.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        body: Bytes,
        mut on_read: impl FnMut(Instant, &[u8]) -> bool,
    ) -> Result<(u16, hyper::HeaderMap), HttpError> {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string());
        for (k, v) in headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| HttpError::Protocol(e.to_string()))?;
        let resp = match self.sender().await?.send_request(req).await {
            Ok(r) => r,
            Err(e) => {
                self.sender = None;
                return Err(HttpError::Protocol(e.to_string()));
            }
        };
        let status = resp.status().as_u16();
        let (parts, mut body) = resp.into_parts();
        let mut pace = Pace::new(self.pace_bps);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| HttpError::Protocol(format!("body broke off: {e}")))?;
            if let Some(data) = frame.data_ref() {
                if !on_read(Instant::now(), data) {
                    self.sender = None; // the rest of the body is still on the wire
                    break;
                }
                if let Some(p) = pace.as_mut() {
                    p.took(data.len()).await;
                }
            }
        }
        Ok((status, parts.headers))
    }

    /// A request whose body is collected whole.
    pub async fn simple(
        &mut self,
        method: &str,
        path: &str,
        body: Bytes,
    ) -> Result<(u16, Vec<u8>), HttpError> {
        let mut out = Vec::new();
        let (status, _) = self
            .request(
                method,
                path,
                &[("content-type".into(), "application/json".into())],
                body,
                |_, d| {
                    out.extend_from_slice(d);
                    true
                },
            )
            .await?;
        Ok((status, out))
    }
}
