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
    // The reply to its end (the request asked the server to close): a probe that hung up
    // after the status line left bytes unread, so its close was a reset, and a server
    // still writing its body logged the reset (`ConnectionResetError` in Python) — noise
    // in the SUT's own log that the ladder then reported as a finding.
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        (&mut tcp).take(REPLY_MAX).read_to_end(&mut reply),
    )
    .await;
    reply.starts_with(b"HTTP/1.") && reply.get(9) == Some(&b'2')
}

/// A readiness reply is a few hundred bytes; the probe reads no more than this of one.
const REPLY_MAX: u64 = 64 * 1024;

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    /// A server that sends its headers, then its body a moment later (as Python's
    /// http.server does with Nagle off): the probe must still be listening for the body.
    #[tokio::test]
    async fn the_probe_reads_the_whole_reply_so_the_server_sees_no_reset() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut req = [0u8; 1024];
            let _ = c.read(&mut req).unwrap();
            c.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\nconnection: close\r\n\r\n")
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
            c.write_all(b"{\"ok\":true}").and_then(|_| c.flush())
        });
        assert!(super::http_ok(&format!("http://127.0.0.1:{port}/ok")).await);
        let body = server.join().unwrap();
        assert!(body.is_ok(), "the server's body write failed: {body:?}");
    }
}
