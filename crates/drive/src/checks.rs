//! What a reply must hold: the reply read as JSON (the body, or the last JSON event of a
//! stream), each check tested against it or against the stream's text, and the values
//! extracted from it — each failure a message that quotes what was there.

use crate::pointer;
use crate::spec::{Check, Extract, Source};
use serde_json::Value;

/// The JSON `data:` events of an SSE body, in order (`[DONE]` and other non-JSON data
/// are skipped).
pub(crate) fn sse_events(body: &[u8]) -> Vec<Value> {
    crate::stream::events(body)
        .iter()
        .filter_map(|e| e.json())
        .collect()
}

/// The reply as JSON: the whole body, or the last `data:` event of a stream that holds
/// an object or an array (an `end` event's `null` is not the answer).
pub(crate) fn reply_json(stream: bool, body: &[u8]) -> Option<Value> {
    match stream {
        false => serde_json::from_slice(body).ok(),
        true => last_json(&crate::stream::events(body)),
    }
}

/// The last event of a stream already parsed whose data is a JSON object or array.
pub(crate) fn last_json(events: &[crate::stream::Event]) -> Option<Value> {
    events
        .iter()
        .rev()
        .filter_map(|e| e.json())
        .find(|v| v.is_object() || v.is_array())
}

/// One check against the reply (`doc`) or the stream's joined text deltas (`text`).
pub(crate) fn check_one(
    check: &Check,
    doc: Option<&Value>,
    text: Option<&str>,
) -> Result<(), String> {
    let at = |p: &str| doc.and_then(|d| pointer::get(d, p));
    let missing = |p: &str| {
        match doc {
        Some(_) => format!("{p} is missing from the reply"),
        None => format!("{p}: the reply is not JSON (a check needs a JSON reply, SSE data event or WebSocket message)"),
    }
    };
    match check {
        Check::Present(p) => at(p).map(|_| ()).ok_or_else(|| missing(p)),
        Check::Equals(p, want) => match at(p) {
            Some(v) if v == want => Ok(()),
            Some(v) => Err(format!("{p} is {}, expected {want}", excerpt(v))),
            None => Err(missing(p)),
        },
        Check::Contains(p, want) => match at(p) {
            Some(Value::String(s)) if s.contains(want.as_str()) => Ok(()),
            Some(v) => Err(format!(
                "{p} does not contain {want:?} (got {})",
                excerpt(v)
            )),
            None => Err(missing(p)),
        },
        Check::TextContains(want) => match text {
            Some(t) if t.contains(want.as_str()) => Ok(()),
            t => Err(format!(
                "the stream's text does not contain {want:?} (got {})",
                excerpt(&Value::String(t.unwrap_or_default().to_string()))
            )),
        },
    }
}

/// The extracted values of a reply: from a body pointer or a header; an optional one
/// (with a default) that is absent takes its default.
pub(crate) fn extract(
    extracts: &[Extract],
    doc: Option<&Value>,
    headers: Option<&hyper::HeaderMap>,
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for e in extracts {
        let found = match &e.from {
            Source::Pointer(p) => doc.and_then(|d| pointer::get(d, p)).map(pointer::as_text),
            Source::Header(h) => headers
                .and_then(|m| m.get(h.as_str()))
                .and_then(|v| v.to_str().ok())
                .map(String::from),
        };
        let value = match (found, &e.default) {
            (Some(v), _) => v,
            (None, Some(d)) => d.clone(),
            (None, None) => {
                let place = match &e.from {
                    Source::Pointer(p) => format!(
                        "{p} is not in the reply{}",
                        doc.map_or(" (not JSON)".to_string(), |d| keys_hint(d, p))
                    ),
                    Source::Header(h) => format!(
                        "the reply has no {h:?} header (it has: {})",
                        headers.map_or(String::new(), |m| m
                            .keys()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", "))
                    ),
                };
                return Err(format!("extract.{}: {place}", e.name));
            }
        };
        out.push((e.name.clone(), value));
    }
    Ok(out)
}

/// The keys the reply has where a pointer went missing: "; at / it has: id, status".
fn keys_hint(doc: &Value, p: &str) -> String {
    let mut parent = p;
    loop {
        parent = parent.rsplit_once('/').map_or("", |(a, _)| a);
        if let Some(v) = pointer::get(doc, parent) {
            let what = match v {
                Value::Object(o) => o.keys().take(12).cloned().collect::<Vec<_>>().join(", "),
                Value::Array(a) => format!("an array of {}", a.len()),
                other => excerpt(other),
            };
            let at = if parent.is_empty() {
                "the reply"
            } else {
                parent
            };
            return format!("; {at} has: {what}");
        }
        if parent.is_empty() {
            return String::new();
        }
    }
}

fn excerpt(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checks_and_sse_replies() {
        let doc = reply_json(
            true,
            b"data: {\"a\":1}\n\ndata: {\"a\":2,\"t\":\"hello\"}\n\nevent: end\ndata: null\n\ndata: [DONE]\n\n",
        )
        .unwrap();
        assert_eq!(doc["a"], 2);
        let d = Some(&doc);
        assert!(check_one(&Check::Contains("/t".into(), "ell".into()), d, None).is_ok());
        assert!(check_one(&Check::Equals("/a".into(), json!(3)), d, None)
            .unwrap_err()
            .contains("expected 3"));
        assert!(check_one(&Check::Present("/zz".into()), d, None).is_err());
        let e = check_one(&Check::Present("/a".into()), None, None).unwrap_err();
        assert!(e.contains("not JSON"), "{e}");
        let t = Check::TextContains("fact".into());
        assert!(check_one(&t, None, Some("a fact!")).is_ok());
        assert!(check_one(&t, None, Some("nothing"))
            .unwrap_err()
            .contains("\"nothing\""));
    }

    #[test]
    fn the_last_message_is_reachable() {
        let doc = json!({"messages": [{"content": "q"}, {"type": "ai", "content": "the fact"}]});
        let c = Check::Contains("/messages/-1/content".into(), "fact".into());
        assert!(check_one(&c, Some(&doc), None).is_ok());
    }

    #[test]
    fn extracts_from_body_and_headers_with_defaults() {
        let doc = json!({"thread_id": "t-1", "n": 3});
        let mut headers = hyper::HeaderMap::new();
        headers.insert("content-location", "/threads/t-1/runs/r-9".parse().unwrap());
        let ex = |name: &str, from: Source, default: Option<&str>| Extract {
            name: name.into(),
            from,
            default: default.map(String::from),
        };
        let got = extract(
            &[
                ex("thread", Source::Pointer("/thread_id".into()), None),
                ex("n", Source::Pointer("/n".into()), None),
                ex("run", Source::Header("content-location".into()), None),
                ex("cursor", Source::Pointer("/next".into()), Some("")),
            ],
            Some(&doc),
            Some(&headers),
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                ("thread".to_string(), "t-1".to_string()),
                ("n".into(), "3".into()),
                ("run".into(), "/threads/t-1/runs/r-9".into()),
                ("cursor".into(), "".into()),
            ]
        );
        let e = extract(
            &[ex("loc", Source::Header("location".into()), None)],
            Some(&doc),
            Some(&headers),
        )
        .unwrap_err();
        assert!(
            e.contains(
                "extract.loc: the reply has no \"location\" header (it has: content-location)"
            ),
            "{e}"
        );
        let e = extract(
            &[ex("t", Source::Pointer("/threadid".into()), None)],
            Some(&doc),
            None,
        )
        .unwrap_err();
        assert_eq!(
            e,
            "extract.t: /threadid is not in the reply; the reply has: n, thread_id"
        );
    }
}
