//! Whether the SUT is ready: a plain HTTP GET that answers 2xx, an answer taken as the
//! SUT's only where its own processes listen on the port, and what a probe that never
//! answered says in the error. Polling it until the time is up is the `sut` module's
//! business.

use super::spec::Ready;
use std::time::Duration;

/// How long an answer on the probed port from a program outside the SUT's process tree is
/// not taken as the SUT's (at most half the ready timeout). Plimsoll chooses a free port
/// and lets it go for the SUT to bind; another program can take it first (seen in CI: a
/// concurrent run's mock answered the probe, and the step's every turn got its 404s). A
/// SUT that starts within this time and exits when it cannot bind is then said as that,
/// with its own words. Past it the answer is taken: a SUT in a container answers through a
/// proxy that is not its child. A SUT slower to bind than this is not protected.
pub(super) const FOREIGN_GRACE: Duration = Duration::from_secs(3);

/// The loopback port a readiness probe asks, where it asks one (an http URL on
/// 127.0.0.1 or localhost, or a port).
fn probed_port(ready: &Ready) -> Option<u16> {
    match ready {
        Ready::Port(p) => Some(*p),
        Ready::Http(url) => {
            let (hostport, _) = host_and_path(url)?;
            let (host, port) = hostport.rsplit_once(':')?;
            matches!(host, "127.0.0.1" | "localhost")
                .then(|| port.parse().ok())
                .flatten()
        }
        Ready::Log(_) | Ready::Started => None,
    }
}

/// Whether a probe's answer, `waited` into the start of the SUT whose group leader is
/// `pid`, is the SUT's: a process of its tree listens on the probed port, the probe names
/// no loopback port, or the grace has passed ([`FOREIGN_GRACE`], at most half of
/// `timeout`, so a short ready timeout still takes a container's answer).
pub(super) fn answer_is_the_suts(
    ready: &Ready,
    pid: u32,
    waited: Duration,
    timeout: Duration,
) -> bool {
    let Some(port) = probed_port(ready) else {
        return true;
    };
    waited >= FOREIGN_GRACE.min(timeout / 2)
        || crate::net::connections(&crate::tree::tree_pids(pid))
            .listening
            .contains(&port)
}

/// What the readiness probe never saw, for the error.
pub(super) fn never_ready(ready: &Ready) -> String {
    match ready {
        Ready::Http(u) => format!("GET {u} never answered 2xx"),
        Ready::Port(p) => format!("nothing listened on 127.0.0.1:{p}"),
        Ready::Log(t) => format!("no output line contained {t:?}"),
        Ready::Started => "it did not start".to_string(),
    }
}

/// An `http://` URL's host and port, and its path ("/" where it has none).
fn host_and_path(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("http://")?;
    Some(match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    })
}

/// A plain HTTP/1.1 GET over loopback, 2xx or not; enough for a readiness probe.
pub(super) async fn http_ok(url: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some((hostport, path)) = host_and_path(url) else {
        return false;
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
    use super::{answer_is_the_suts, probed_port, Ready, FOREIGN_GRACE};
    use std::io::{Read, Write};
    use std::time::Duration;

    #[test]
    fn the_probed_port_is_a_loopback_ones() {
        assert_eq!(probed_port(&Ready::Port(8080)), Some(8080));
        let http = |u: &str| probed_port(&Ready::Http(u.into()));
        assert_eq!(http("http://127.0.0.1:4000/health"), Some(4000));
        assert_eq!(http("http://localhost:4001"), Some(4001));
        assert_eq!(http("http://10.0.0.7:4000/health"), None);
        assert_eq!(probed_port(&Ready::Log("up".into())), None);
    }

    /// A port another program listens on (here this test's own listener, not a process of
    /// the "SUT" tree, a child that sleeps) answers, but not for the SUT until the grace
    /// is over; a port the tree itself listens on is the SUT's at once.
    #[test]
    fn an_answer_on_a_port_the_tree_does_not_hold_is_not_the_suts() {
        let foreign = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = foreign.local_addr().unwrap().port();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let ready = Ready::Port(port);
        let long = Duration::from_secs(30);
        assert!(!answer_is_the_suts(
            &ready,
            child.id(),
            Duration::ZERO,
            long
        ));
        assert!(answer_is_the_suts(&ready, child.id(), FOREIGN_GRACE, long));
        // A ready timeout of 2 s: its half is the grace.
        let short = Duration::from_secs(2);
        let early = Duration::from_millis(900);
        assert!(!answer_is_the_suts(&ready, child.id(), early, short));
        assert!(answer_is_the_suts(
            &ready,
            child.id(),
            Duration::from_secs(1),
            short
        ));
        child.kill().unwrap();
        child.wait().unwrap();
        let me = std::process::id();
        assert!(answer_is_the_suts(&ready, me, Duration::ZERO, long));
    }

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
