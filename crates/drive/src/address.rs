//! Where load goes: a session's URL turned into a socket address (loopback only unless
//! `--allow-remote`), a raw socket's or a bus's address checked the same way before any
//! connection opens, the port and `ws://` form of a base URL, the replica a session
//! sticks to and whether a session is this shard's. Opening connections is the
//! transports' business.

use crate::run::Failure;
use crate::spec::Transport;
use anyhow::{bail, Context};
use std::net::{SocketAddr, ToSocketAddrs};

/// `http://host:port/path` → (address, path). Only loopback unless allowed.
pub fn target(url: &str, allow_remote: bool) -> anyhow::Result<(SocketAddr, String)> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("ws://"))
        .with_context(|| format!("url {url:?} must start with http:// or ws://"))?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let addr = hostport
        .to_socket_addrs()
        .with_context(|| format!("url {url:?}: cannot resolve {hostport:?} (write host:port)"))?
        .next()
        .with_context(|| format!("url {url:?}: {hostport:?} resolves to nothing"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        bail!("url {url:?} is not a loopback address; Plimsoll sends load only to this machine unless you pass --allow-remote");
    }
    Ok((addr, path))
}

/// `host:port` → its address, only loopback unless allowed.
pub(crate) fn loopback(address: &str, allow_remote: bool) -> Result<SocketAddr, Failure> {
    let addr = address
        .to_socket_addrs()
        .map_err(|e| Failure::new("connect", format!("{address}: {e} (write host:port)")))?
        .next()
        .ok_or_else(|| Failure::new("connect", format!("{address} resolves to nothing")))?;
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(Failure::new("connect", format!("{address} is not a loopback address; Plimsoll sends load only to this machine unless you pass --allow-remote")));
    }
    Ok(addr)
}

/// Checks a socket's address before any connection opens (a typo is one error, not
/// thousands).
pub(crate) fn check(transport: Transport, address: &str, allow_remote: bool) -> anyhow::Result<()> {
    let res = match transport {
        Transport::Tcp => loopback(address, allow_remote).map(|_| ()),
        Transport::Unix => Ok(()),
        Transport::Ws => target(address, allow_remote)
            .map(|_| ())
            .map_err(|e| Failure::new("connect", e.to_string())),
    };
    res.map_err(|f| anyhow::anyhow!("bus address: {}", f.message))
}

/// `tcp://127.0.0.1:7000` → (Tcp, "127.0.0.1:7000"); `unix:///run/x.sock` → (Unix, "/run/x.sock").
pub(crate) fn socket(url: &str) -> anyhow::Result<(Transport, &str)> {
    if let Some(a) = url.strip_prefix("tcp://") {
        return Ok((Transport::Tcp, a.trim_end_matches('/')));
    }
    if let Some(p) = url.strip_prefix("unix://") {
        return Ok((Transport::Unix, p));
    }
    bail!("url {url:?} must start with tcp://HOST:PORT or unix:///PATH")
}

/// `http://127.0.0.1:8080/` → `8080`.
pub(crate) fn port_of(base: &str) -> String {
    base.rsplit(':')
        .next()
        .unwrap_or("")
        .trim_end_matches('/')
        .to_string()
}

/// `http://…` → `ws://…`.
pub(crate) fn ws_base(base: &str) -> String {
    base.replacen("http://", "ws://", 1)
}

/// The base URL and port session `i` sticks to: with replicas, `replicas[i % n]`.
pub(crate) fn replica(i: usize, base: &str, port: &str, replicas: &[String]) -> (String, String) {
    match replicas.len() {
        0 => (base.to_string(), port.to_string()),
        n => {
            let b = replicas[i % n].clone();
            let p = b.rsplit(':').next().unwrap_or("").to_string();
            (b, p)
        }
    }
}

/// Whether session `i` is this driver's (every session without shards).
pub fn in_shard(i: usize, shard: Option<(usize, usize)>) -> bool {
    shard.is_none_or(|(index, count)| i % count == index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_without_the_flag() {
        assert!(target("http://127.0.0.1:9/x", false).is_ok());
        let e = target("http://10.1.2.3:80/x", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--allow-remote"), "{e}");
        assert!(target("http://10.1.2.3:80/x", true).is_ok());
    }
}
