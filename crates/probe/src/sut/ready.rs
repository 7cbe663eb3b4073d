//! Whether the SUT is ready: a plain HTTP GET that answers 2xx, and what a probe that
//! never answered says in the error. Polling it until the time is up is the `sut`
//! module's business.

use super::spec::Ready;
use std::time::Duration;

/// What the readiness probe never saw, for the error.
pub(super) fn never_ready(ready: &Ready) -> String {
    match ready {
        Ready::Http(u) => format!("GET {u} never answered 2xx"),
        Ready::Port(p) => format!("nothing listened on 127.0.0.1:{p}"),
        Ready::Log(t) => format!("no output line contained {t:?}"),
        Ready::Started => "it did not start".to_string(),
    }
}

/// A plain HTTP/1.1 GET over loopback, 2xx or not; enough for a readiness probe.
pub(super) async fn http_ok(url: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let connect = tokio::net::TcpStream::connect(hostport);
    let Ok(Ok(mut tcp)) = tokio::time::timeout(Duration::from_secs(2), connect).await else {
        return false;
    };
    let req = format!("GET {path} HTTP/1.1\r\nhost: {hostport}\r\nconnection: close\r\n\r\n");
    if tcp.write_all(req.as_bytes()).await.is_err() {
        return false;
    }
    let mut buf = [0u8; 12];
    matches!(
        tokio::time::timeout(Duration::from_secs(2), tcp.read_exact(&mut buf)).await,
        Ok(Ok(_))
    ) && buf.starts_with(b"HTTP/1.")
        && buf[9] == b'2'
}
