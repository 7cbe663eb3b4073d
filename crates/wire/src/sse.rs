//! Server-sent-event framing (`event:` / `data:` lines ending in a blank line).
//!
//! The payloads here are single-line JSON, so one `data:` line per event suffices.

/// Appends `data: {payload}\n\n`.
pub fn data(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\n\n");
}

/// Appends `event: {name}\ndata: {payload}\n\n`.
pub fn event(out: &mut Vec<u8>, name: &str, payload: &[u8]) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.push(b'\n');
    data(out, payload);
}

/// Appends `s` as a JSON string literal (quoted and escaped).
pub fn json_str(out: &mut Vec<u8>, s: &str) {
    serde_json::to_writer(&mut *out, s).expect("writing to a Vec cannot fail");
}

/// Appends a JSON value.
pub fn json(out: &mut Vec<u8>, v: &serde_json::Value) {
    serde_json::to_writer(&mut *out, v).expect("writing to a Vec cannot fail");
}

#[cfg(test)]
mod tests {
    #[test]
    fn frames_end_with_a_blank_line_and_escape_strings() {
        let mut out = Vec::new();
        super::event(&mut out, "ping", b"{}");
        super::json_str(&mut out, "a\"b\n");
        assert_eq!(out, b"event: ping\ndata: {}\n\n\"a\\\"b\\n\"");
    }
}
