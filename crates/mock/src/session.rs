//! Which session a request belongs to.
//!
//! A driver marks the conversation: the first user message (and, for turn checks,
//! every user message) carries `[[plimsoll session=ID nonce=NONCE turn=K]]`. A system
//! that cannot pass text through may send `x-plimsoll-session` / `x-plimsoll-nonce`
//! headers instead. Without either, the request is anonymous: served and counted, but
//! only the checks that need no session run on it.

use wire::{Request, Role};

/// The ledger key of requests that carry no session marker.
pub const ANONYMOUS: &str = "-";

/// A session marker found in a user message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub session: String,
    pub nonce: String,
    pub turn: Option<u32>,
}

const OPEN: &str = "[[plimsoll ";

/// Every marker in `text`.
pub fn markers(text: &str) -> Vec<Marker> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        let after = &rest[i + OPEN.len()..];
        let Some(end) = after.find("]]") else { break };
        let (mut session, mut nonce, mut turn) = (None, None, None);
        for kv in after[..end].split_whitespace() {
            match kv.split_once('=') {
                Some(("session", v)) => session = Some(v.to_string()),
                Some(("nonce", v)) => nonce = Some(v.to_string()),
                Some(("turn", v)) => turn = v.parse().ok(),
                _ => {}
            }
        }
        if let Some(session) = session {
            out.push(Marker {
                session,
                nonce: nonce.unwrap_or_default(),
                turn,
            });
        }
        rest = &after[end + 2..];
    }
    out
}

/// The session of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// `None` for anonymous requests.
    pub id: Option<String>,
    pub nonce: String,
}

impl Session {
    pub fn key(&self) -> &str {
        self.id.as_deref().unwrap_or(ANONYMOUS)
    }
}

/// Finds the session from the first marked user message, else from the headers.
pub fn identify(
    req: &Request,
    header_session: Option<&str>,
    header_nonce: Option<&str>,
) -> Session {
    for m in req.messages.iter().filter(|m| m.role == Role::User) {
        if let Some(mk) = markers(&m.text).into_iter().next() {
            return Session {
                id: Some(mk.session),
                nonce: mk.nonce,
            };
        }
    }
    if let Some(mk) = markers(&req.system).into_iter().next() {
        return Session {
            id: Some(mk.session),
            nonce: mk.nonce,
        };
    }
    Session {
        id: header_session.filter(|s| !s.is_empty()).map(str::to_string),
        nonce: header_nonce.unwrap_or("").to_string(),
    }
}

/// Nonces in Plimsoll's own format, `psn` + 16 hex digits, found anywhere in `text`.
pub fn nonces(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("psn").filter_map(move |(i, _)| {
        let cand = text.get(i..i + 19)?;
        let hex = &cand[3..];
        let boundary = text[i + 19..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_hexdigit());
        (hex.bytes().all(|b| b.is_ascii_hexdigit()) && boundary).then_some(cand)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_markers() {
        let m = markers("hi [[plimsoll session=s7 nonce=psn0123456789abcdef turn=3]] and [[plimsoll session=x]]");
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].session.as_str(), m[0].nonce.as_str(), m[0].turn),
            ("s7", "psn0123456789abcdef", Some(3))
        );
        assert_eq!(m[1].turn, None);
        assert!(markers("[[plimsoll nonce=a]]").is_empty());
    }

    #[test]
    fn finds_only_well_formed_nonces() {
        let t = "a psn0123456789abcdef b psn0123 c psn0123456789abcdef0 d xpsnffffffffffffffff";
        assert_eq!(
            nonces(t).collect::<Vec<_>>(),
            ["psn0123456789abcdef", "psnffffffffffffffff"]
        );
    }
}
