//! What a reply must hold: the reply read as JSON (the body, or the last JSON event of a
//! stream) and each `[checks]` entry tested against it, with a message that quotes it.

use crate::session::{Check, Protocol};

/// The JSON `data:` events of an SSE body, in order (`[DONE]` and other non-JSON data
/// are skipped).
pub(crate) fn sse_events(body: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// The reply as JSON: the whole body (http), or the last JSON `data:` event (sse).
pub(crate) fn reply_json(protocol: Protocol, body: &[u8]) -> Option<serde_json::Value> {
    match protocol {
        Protocol::Http | Protocol::Ws | Protocol::OpenaiChat | Protocol::AnthropicMessages => {
            serde_json::from_slice(body).ok()
        }
        Protocol::Sse => sse_events(body).pop(),
    }
}

pub(crate) fn check_one(check: &Check, doc: &serde_json::Value) -> Result<(), String> {
    match check {
        Check::Present(p) => doc
            .pointer(p)
            .map(|_| ())
            .ok_or_else(|| format!("{p} is missing from the reply")),
        Check::Equals(p, want) => match doc.pointer(p) {
            Some(v) if v == want => Ok(()),
            Some(v) => Err(format!("{p} is {v}, expected {want}")),
            None => Err(format!("{p} is missing from the reply")),
        },
        Check::Contains(p, want) => match doc.pointer(p) {
            Some(serde_json::Value::String(s)) if s.contains(want.as_str()) => Ok(()),
            Some(v) => Err(format!(
                "{p} does not contain {want:?} (got {})",
                excerpt(v)
            )),
            None => Err(format!("{p} is missing from the reply")),
        },
    }
}

fn excerpt(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.len() > 80 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(80).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_and_sse_replies() {
        let doc = reply_json(
            Protocol::Sse,
            b"data: {\"a\":1}\n\ndata: {\"a\":2,\"t\":\"hello\"}\n\ndata: [DONE]\n\n",
        )
        .unwrap();
        assert_eq!(doc["a"], 2);
        assert!(check_one(&Check::Contains("/t".into(), "ell".into()), &doc).is_ok());
        assert!(
            check_one(&Check::Equals("/a".into(), serde_json::json!(3)), &doc)
                .unwrap_err()
                .contains("expected 3")
        );
        assert!(check_one(&Check::Present("/zz".into()), &doc).is_err());
    }
}
