//! What a refused request's JSON error body names (the SUT's own words, as the driver
//! kept them beside its failure: `StepReport::first_bodies`), read for a person: the fields a
//! validation error points at (FastAPI/pydantic's `detail: [{loc, msg}]`) or the
//! message of `{"error": {"message"}}`, `{"detail": "…"}`, `{"message": "…"}` — read
//! leniently, since the body comes cut at a few hundred characters; and, when a field the
//! JSON body did send is "missing", the likely cause: the endpoint reads form fields.
//! Ordering the problems is `check`'s business.

/// One field an error body names and what it says of it: `body.message`, `Field required`.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub loc: Vec<String>,
    pub msg: String,
}

/// The SUT's body as JSON text, if it is that (a JSON object, perhaps cut off).
fn json(body: &str) -> Option<&str> {
    let body = body.trim_start();
    body.starts_with('{').then_some(body)
}

/// The fields a validation error body names, in order; works on a cut-off body.
pub fn named_fields(body: &str) -> Vec<Named> {
    let Some(body) = json(body) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("\"loc\":") {
        rest = &rest[i + 6..];
        let Some(close) = rest.find(']') else { break };
        let loc: Vec<String> = rest[..close]
            .trim_start_matches([' ', '['])
            .split(',')
            .map(|p| p.trim().trim_matches('"').to_string())
            .filter(|p| !p.is_empty())
            .collect();
        rest = &rest[close..];
        let msg = string_after(rest, "\"msg\":").unwrap_or_default();
        out.push(Named { loc, msg });
    }
    out
}

/// The error's own message when the body is not a list of fields.
pub fn message(body: &str) -> Option<String> {
    let body = json(body)?;
    ["\"message\":", "\"detail\":", "\"error\":"]
        .iter()
        .find_map(|k| string_after(body, k))
}

/// The JSON string right after `key` (skipping spaces), unescaped enough to read.
fn string_after(s: &str, key: &str) -> Option<String> {
    let v = s[s.find(key)? + key.len()..].trim_start();
    let v = v.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    (!out.is_empty()).then_some(out) // cut off mid-string: what there is
}

/// `body.message: Field required; body.session_id: Field required`.
pub fn fields_line(named: &[Named]) -> String {
    named
        .iter()
        .map(|n| format!("{}: {}", n.loc.join("."), n.msg))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The fix when the SUT calls fields of the body missing: if the JSON body sent them,
/// the endpoint most likely reads form fields; else the body lacks them.
pub fn missing_hint(named: &[Named], sent_json_keys: Option<&[String]>) -> Option<String> {
    let missing: Vec<&str> = named
        .iter()
        .filter(|n| {
            let m = n.msg.to_ascii_lowercase();
            n.loc.first().is_some_and(|l| l == "body")
                && (m.contains("field required") || m.contains("missing"))
        })
        .filter_map(|n| n.loc.get(1).map(String::as_str))
        .collect();
    let keys = sent_json_keys?;
    if missing.is_empty() {
        return None;
    }
    let sent = missing.iter().any(|m| keys.iter().any(|k| k == m));
    let form: Vec<String> = missing.iter().map(|m| format!("{m} = \"…\"")).collect();
    Some(if sent || keys.is_empty() {
        format!(
            "the JSON body sends {}, yet the SUT calls it missing: this endpoint may take form fields: `form = {{ {} }}` in place of body (`plimsoll init --form` writes one)",
            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
            form.join(", ")
        )
    } else {
        format!(
            "add {} to the body; if the endpoint takes form fields, write them as `form = {{ {} }}` in place of body",
            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
            form.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FASTAPI: &str = r#"{"detail":[{"type":"missing","loc":["body","message"],"msg":"Field required","input":null},{"type":"missing","loc":["body","session_id"],"msg":"Field req"#;

    #[test]
    fn a_cut_off_fastapi_body_still_names_its_fields() {
        let n = named_fields(FASTAPI);
        assert_eq!(
            fields_line(&n),
            "body.message: Field required; body.session_id: Field req"
        );
        let sent = vec!["message".to_string(), "session".to_string()];
        let hint = missing_hint(&n, Some(&sent)).unwrap();
        assert!(
            hint.contains("this endpoint may take form fields: `form = { message = \"…\""),
            "{hint}"
        );
        let other = vec!["text".to_string()];
        let hint = missing_hint(&n, Some(&other)).unwrap();
        assert!(hint.starts_with("add `message`"), "{hint}");
        assert_eq!(missing_hint(&n, None), None);
    }

    #[test]
    fn other_error_bodies_give_their_message() {
        let m = message(r#"{"error":{"message":"bad key \"x\"","type":"auth"}}"#);
        assert_eq!(m.as_deref(), Some("bad key \"x\""));
        assert_eq!(message("Not Found"), None);
        assert_eq!(
            message(r#"  {"detail": "no such thread"}"#).as_deref(),
            Some("no such thread")
        );
    }
}
