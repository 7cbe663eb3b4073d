//! Whose reply a caller heard, asked of the shared mock (`POST /plimsoll/owner`): the words
//! check of calls driven from shards, which share one mock but not its ledger in memory. A
//! reply heard on another shard's call is named all the same.

use std::io::{Read, Write};
use std::net::ToSocketAddrs;
use std::sync::{Arc, Once};
use std::time::Duration;

/// How long a question may take, connecting, sending or reading.
const WAIT: Duration = Duration::from_secs(5);

/// The shared mock at `base` (`http://host:port`) as the words check's ledger; None, said
/// once, for a URL it cannot ask over plain HTTP (the calls' words then go unchecked).
pub(crate) fn of_mock(base: &str) -> Option<drive::call::Owner> {
    let Some(addr) = base
        .strip_prefix("http://")
        .map(|a| a.trim_end_matches('/').to_string())
        .filter(|a| !a.contains('/'))
    else {
        eprintln!("--mock {base}: not http://HOST:PORT, so the calls' words are not checked (a reply heard on the wrong call goes unnamed)");
        return None;
    };
    let said = Arc::new(Once::new());
    Some(drive::call::Owner(Arc::new(move |text: &str| {
        let ask = || match ask(&addr, text) {
            Ok(owner) => owner,
            Err(why) => {
                said.call_once(|| {
                    eprintln!("the shared mock at {addr} could not say whose reply a caller heard ({why}): those words count as unheard");
                });
                None
            }
        };
        // Asked as a call ends, on the driver's runtime: its other tasks move off this
        // thread while it waits.
        let flavor = tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor());
        match flavor {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(ask),
            _ => ask(),
        }
    })))
}

/// One question over its own connection: the owner, None when the mock knows no such
/// reply; an error when it cannot be asked (unreachable, too slow, an older mock).
fn ask(addr: &str, text: &str) -> Result<Option<String>, String> {
    let to = addr
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let mut s = std::net::TcpStream::connect_timeout(&to, WAIT).map_err(|e| e.to_string())?;
    let _ = (
        s.set_read_timeout(Some(WAIT)),
        s.set_write_timeout(Some(WAIT)),
    );
    let head = format!(
        "POST /plimsoll/owner HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(text.as_bytes()))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).map_err(|e| e.to_string())?;
    let out = String::from_utf8_lossy(&out);
    let (head, body) = out.split_once("\r\n\r\n").ok_or("no HTTP answer")?;
    if !head.starts_with("HTTP/1.1 200") {
        let status = head.lines().next().unwrap_or_default();
        return Err(format!(
            "{status}: a `plimsoll mock` of this version answers POST /plimsoll/owner"
        ));
    }
    let v: serde_json::Value = serde_json::from_str(body.trim()).map_err(|e| e.to_string())?;
    // The mock's anonymous session is the drive's "no call's".
    Ok(v["owner"]
        .as_str()
        .map(|o| match o == mock::session::ANONYMOUS {
            true => drive::call::NO_CALL.to_string(),
            false => o.to_string(),
        }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mock that cannot be reached is an error said once, not a hang: the port of a
    /// listener already closed answers nothing.
    #[test]
    fn an_unreachable_mock_is_an_error_not_a_wait() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let t0 = std::time::Instant::now();
        assert!(ask(&format!("127.0.0.1:{port}"), "hello").is_err());
        assert!(t0.elapsed() < WAIT * 2);
        assert!(of_mock("https://mock:8700").is_none());
        assert!(of_mock("http://127.0.0.1:8700").is_some());
    }
}
