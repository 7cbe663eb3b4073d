//! A lean streaming HTTP/1.1 client for the benchmark: one keep-alive connection per
//! simulated stream, timestamps taken as each read arrives.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::Request;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use tokio::net::TcpStream;
use tokio::time::Instant;

pub struct Conn {
    addr: SocketAddr,
    sender: Option<SendRequest<Full<Bytes>>>,
}

/// What one request saw: when it was sent, and when each read arrived with how
/// many delta events it held.
pub struct Seen {
    pub sent: Instant,
    pub status: u16,
    pub reads: Vec<(Instant, u32)>,
}

impl Conn {
    pub fn new(addr: SocketAddr) -> Self {
        Conn { addr, sender: None }
    }

    async fn sender(&mut self) -> anyhow::Result<&mut SendRequest<Full<Bytes>>> {
        let stale = match &self.sender {
            Some(s) => s.is_closed(),
            None => true,
        };
        if stale {
            let tcp = TcpStream::connect(self.addr).await?;
            tcp.set_nodelay(true)?;
            let (sender, conn) = http1::handshake(TokioIo::new(tcp)).await?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            self.sender = Some(sender);
        }
        let s = self.sender.as_mut().expect("set above");
        s.ready().await?;
        Ok(s)
    }

    /// POSTs `body` to `path` and reads the whole response, counting occurrences of
    /// `pattern` (the API's delta-event marker) in each read.
    pub async fn post(&mut self, path: &str, body: Bytes, pattern: &[u8]) -> anyhow::Result<Seen> {
        let req = Request::post(path)
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("authorization", "Bearer bench")
            .header("x-api-key", "bench")
            .header("anthropic-version", "2023-06-01")
            .body(Full::new(body))?;
        let sent = Instant::now();
        let resp = match self.sender().await?.send_request(req).await {
            Ok(r) => r,
            Err(e) => {
                self.sender = None;
                return Err(e.into());
            }
        };
        let status = resp.status().as_u16();
        let mut body = resp.into_body();
        let mut reads = Vec::with_capacity(64);
        while let Some(frame) = body.frame().await {
            let frame = frame?;
            if let Some(data) = frame.data_ref() {
                let n = count(data, pattern);
                reads.push((Instant::now(), n));
            }
        }
        Ok(Seen {
            sent,
            status,
            reads,
        })
    }

    pub async fn get(&mut self, path: &str) -> anyhow::Result<Bytes> {
        let req = Request::get(path)
            .header("host", self.addr.to_string())
            .body(Full::new(Bytes::new()))?;
        let resp = self.sender().await?.send_request(req).await?;
        Ok(resp.into_body().collect().await?.to_bytes())
    }

    pub async fn post_empty(&mut self, path: &str) -> anyhow::Result<()> {
        let req = Request::post(path)
            .header("host", self.addr.to_string())
            .body(Full::new(Bytes::new()))?;
        let resp = self.sender().await?.send_request(req).await?;
        resp.into_body().collect().await?;
        Ok(())
    }
}

fn count(hay: &[u8], needle: &[u8]) -> u32 {
    if needle.is_empty() || hay.len() < needle.len() {
        return 0;
    }
    hay.windows(needle.len()).filter(|w| *w == needle).count() as u32
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_non_overlapping_markers() {
        assert_eq!(super::count(b"xabyabab", b"ab"), 3);
        assert_eq!(super::count(b"a", b"ab"), 0);
    }
}
