//! Which LiveKit server a call goes to, with the key pair that signs for it.

use crate::error::CallError;

/// A LiveKit server and the key pair that signs for it.
#[derive(Clone, Debug)]
pub struct Server {
    /// `ws://host:port` (or `http://`), as LiveKit's SDKs take it.
    pub url: String,
    pub key: String,
    pub secret: String,
}

impl Server {
    fn authority(&self) -> &str {
        let u = self.url.trim_end_matches('/');
        u.split_once("://").map_or(u, |(_, rest)| rest)
    }

    pub(crate) fn http_base(&self) -> String {
        format!("http://{}", self.authority())
    }

    pub(crate) fn ws_base(&self) -> String {
        format!("ws://{}", self.authority())
    }

    /// `e` said as a server that is not there, with the fix.
    pub(crate) fn unreachable(&self, e: CallError) -> CallError {
        CallError::new(
            "signaling",
            format!(
                "livekit: nothing answers at {} ({}): start livekit-server there, or give [voice] url as the server's",
                self.ws_base(),
                e.message
            ),
        )
    }
}
