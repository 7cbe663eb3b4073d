//! JSON pointers as session checks and extracts use them: RFC 6901, plus a negative
//! index counting from the end of an array (`/messages/-1/content` is the last
//! message's content), because an agent server's answer is usually the last element of
//! a list whose length nobody knows in advance.

use serde_json::Value;

/// The value at `pointer` in `doc`, or None. `""` is the whole document; `-N` as an
/// array index is the N-th element from the end.
pub fn get<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').try_fold(doc, |at, raw| {
        let token = raw.replace("~1", "/").replace("~0", "~");
        match at {
            Value::Object(m) => m.get(&token),
            Value::Array(a) => index(a.len(), &token).and_then(|i| a.get(i)),
            _ => None,
        }
    })
}

/// An array index token: `3`, or `-1` for the last element. Leading zeros and `-`
/// alone (RFC 6901's "past the end") address nothing.
fn index(len: usize, token: &str) -> Option<usize> {
    let well_formed = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if let Some(back) = token.strip_prefix('-') {
        let n: usize = well_formed(back).then(|| back.parse().ok())??;
        return (n >= 1 && n <= len).then(|| len - n);
    }
    if !well_formed(token) || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

/// Whether `got` is what was asked for: equal to `want`, or (without one) present and
/// not null — the rule of `until`, `ttft_event` and `done_event`.
pub fn holds(got: Option<&Value>, want: Option<&Value>) -> bool {
    match (want, got) {
        (_, None) | (None, Some(Value::Null)) => false,
        (None, Some(_)) => true,
        (Some(want), Some(v)) => v == want,
    }
}

/// A value as text to put into a template: strings as they are, anything else as JSON.
pub fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn negative_indexes_count_from_the_end() {
        let doc = json!({"messages": [{"content": "q"}, {"content": "a1"}, {"content": "a2"}]});
        assert_eq!(get(&doc, "/messages/-1/content"), Some(&json!("a2")));
        assert_eq!(get(&doc, "/messages/-3/content"), Some(&json!("q")));
        assert_eq!(get(&doc, "/messages/-4"), None);
        assert_eq!(get(&doc, "/messages/-0"), None);
        assert_eq!(get(&doc, "/messages/-"), None);
        assert_eq!(get(&doc, "/messages/1/content"), Some(&json!("a1")));
        assert_eq!(get(&doc, "/messages/01"), None);
    }

    #[test]
    fn plain_pointers_agree_with_serde_json() {
        let doc = json!({"a/b": {"~x": [1, 2]}, "": 5, "-1": "key"});
        for p in [
            "",
            "/a~1b",
            "/a~1b/~0x/1",
            "/",
            "/-1",
            "/missing",
            "/a~1b/~0x/2",
        ] {
            assert_eq!(get(&doc, p), doc.pointer(p), "{p}");
        }
        assert_eq!(get(&doc, "no-slash"), None);
    }
}
