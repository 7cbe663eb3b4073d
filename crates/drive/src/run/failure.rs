//! How a failure is named: its kind, the key it is counted under in `errors_by_kind`
//! (`connect`, `timeout`, `protocol`, `closed`, `config`, `status_503`, `check_failed`,
//! `extract_failed`, `lost`, `teardown_…`), and a message for the terminal; and, for a
//! reply refused by its status, the SUT's own body that message quotes, taken back out
//! here, beside the one place that writes it. Deciding what failed is the runners'
//! business; this is only the shape they report it in.

/// A failure's kind and message.
pub type Failure = (String, String);

/// A reply whose status was not the one expected (`expected`: "a 2xx" or a code): kind
/// `status_NNN`, and a message that quotes the SUT's body (its first 200 characters).
pub fn status(code: u16, expected: &str, body: &[u8]) -> Failure {
    let snippet: String = String::from_utf8_lossy(body).chars().take(200).collect();
    let body = match snippet.trim().is_empty() {
        true => EMPTY.to_string(),
        false => snippet,
    };
    (
        format!("status_{code}"),
        format!("HTTP {code} (expected {expected}{QUOTE}{body}"),
    )
}

/// What a status failure's message says of a body it could not quote.
const EMPTY: &str = "(empty body)";
/// Where the SUT's words start in a status failure's message.
const QUOTE: &str = "): ";

/// The SUT's body that a status failure's message quotes (None for any other kind, or an
/// empty body), whatever the runner put before it (the session, the request's name).
pub fn quoted_body<'m>(kind: &str, message: &'m str) -> Option<&'m str> {
    let code = kind.strip_prefix("status_")?;
    let at = message.find(&format!("HTTP {code} (expected "))?;
    let rest = &message[at..];
    let body = &rest[rest.find(QUOTE)? + QUOTE.len()..];
    (body != EMPTY).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_a_status_failure_quotes_comes_back_out_whole() {
        let body = br#"{"detail":[{"loc":["body","message"],"msg":"Field required"}]} (a: b): c"#;
        let (kind, m) = status(422, "a 2xx", body);
        assert_eq!(kind, "status_422");
        let named = format!("session s3 setup, request \"create\" (setup[0]): {m}");
        assert_eq!(
            quoted_body(&kind, &named),
            Some(r#"{"detail":[{"loc":["body","message"],"msg":"Field required"}]} (a: b): c"#)
        );
        let (kind, m) = status(500, "201", b"  ");
        assert_eq!(m, "HTTP 500 (expected 201): (empty body)");
        assert_eq!(quoted_body(&kind, &m), None);
        assert_eq!(quoted_body("timeout", "HTTP 500 (expected 201): {}"), None);
    }
}
