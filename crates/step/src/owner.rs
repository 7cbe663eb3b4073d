//! Whose reply a caller heard, asked of the shared mock (`POST /plimsoll/owner`): the words
//! check of calls driven from shards, which share one mock but not its ledger in memory. A
//! reply heard on another shard's call is named all the same.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

/// The shared mock at `base` (`http://host:port`) as the words check's ledger.
pub(crate) fn of_mock(base: &str) -> Option<drive::call::Owner> {
    let addr = base
        .strip_prefix("http://")?
        .trim_end_matches('/')
        .to_string();
    Some(drive::call::Owner(Arc::new(move |text: &str| {
        // Asked as a call ends, on the driver's runtime: its other tasks move off this
        // thread while it waits.
        let flavor = tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor());
        match flavor {
            Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
                tokio::task::block_in_place(|| ask(&addr, text))
            }
            _ => ask(&addr, text),
        }
    })))
}

/// One question over its own connection; None when the mock does not answer or knows no
/// such reply.
fn ask(addr: &str, text: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let head = format!(
        "POST /plimsoll/owner HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(text.as_bytes()).ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let out = String::from_utf8_lossy(&out);
    let body = out.split_once("\r\n\r\n")?.1;
    let v: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    let o = v["owner"].as_str()?;
    // The mock's anonymous session is the drive's "no call's".
    Some(match o == mock::session::ANONYMOUS {
        true => drive::call::NO_CALL.to_string(),
        false => o.to_string(),
    })
}
