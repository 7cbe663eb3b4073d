//! How a failure is named: its kind, the key it is counted under in `errors_by_kind`
//! (`connect`, `timeout`, `protocol`, `closed`, `config`, `status_503`, `check_failed`,
//! `extract_failed`, `lost`, `teardown_…`), a message for the terminal, and for a reply
//! refused by its status the SUT's own body that message quotes. Deciding what failed is
//! the runners' business; this is only the shape they report it in.

use std::collections::BTreeMap;

/// A failure: the key it is counted under, a message for the terminal, and for a reply
/// refused by its status the SUT's own body (its first 200 characters), kept apart from
/// the message that quotes it, so nothing reads it back out of the words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: String,
    pub message: String,
    pub body: Option<String>,
}

impl Failure {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            kind: kind.into(),
            message: message.into(),
            body: None,
        }
    }

    /// Of this kind.
    pub fn is(&self, kind: &str) -> bool {
        self.kind == kind
    }

    /// The same failure, its message said again (where it happened put before it): its
    /// kind and the SUT's body as they were.
    pub fn said(self, say: impl FnOnce(&str) -> String) -> Failure {
        Failure {
            message: say(&self.message),
            ..self
        }
    }
}

/// Failures counted by kind, with the first of each kind whole: what a step's report says
/// of its errors (the session runners' recorder and the bus keep one each).
#[derive(Clone, Debug, Default)]
pub struct Tally {
    by_kind: BTreeMap<String, u64>,
    first: BTreeMap<String, Failure>,
}

/// A tally's parts for the report: the count of each kind, the first message of each,
/// and the SUT's body where that first failure quotes one.
pub type TallyParts = (
    BTreeMap<String, u64>,
    BTreeMap<String, String>,
    BTreeMap<String, String>,
);

impl Tally {
    pub fn add(&mut self, f: Failure) {
        *self.by_kind.entry(f.kind.clone()).or_insert(0) += 1;
        self.first.entry(f.kind.clone()).or_insert(f);
    }

    pub fn parts(self) -> TallyParts {
        let bodies = self
            .first
            .iter()
            .filter_map(|(kind, f)| Some((kind.clone(), f.body.clone()?)))
            .collect();
        let messages = self
            .first
            .into_iter()
            .map(|(k, f)| (k, f.message))
            .collect();
        (self.by_kind, messages, bodies)
    }
}

/// A reply whose status was not the one expected (`expected`: "a 2xx" or a code): kind
/// `status_NNN`, a message that quotes the SUT's body, and that body (none when empty).
pub fn status(code: u16, expected: &str, body: &[u8]) -> Failure {
    let snippet: String = String::from_utf8_lossy(body).chars().take(200).collect();
    let body = (!snippet.trim().is_empty()).then_some(snippet);
    Failure {
        kind: format!("status_{code}"),
        message: format!(
            "HTTP {code} (expected {expected}): {}",
            body.as_deref().unwrap_or("(empty body)")
        ),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SUT's body a status failure quotes is kept whole beside its words, however the
    /// runner says the message again; an empty body is said so and kept as none.
    #[test]
    fn a_status_failure_keeps_the_body_it_quotes() {
        let body = br#"{"detail":[{"loc":["body","message"],"msg":"Field required"}]} (a: b): c"#;
        let f = status(422, "a 2xx", body)
            .said(|m| format!("session s3 setup, request \"create\" (setup[0]): {m}"));
        assert_eq!(f.kind, "status_422");
        assert!(f.message.starts_with("session s3 setup, request \"create\" (setup[0]): HTTP 422 (expected a 2xx): {\"detail\""), "{}", f.message);
        assert_eq!(
            f.body.as_deref(),
            Some(r#"{"detail":[{"loc":["body","message"],"msg":"Field required"}]} (a: b): c"#)
        );
        let empty = status(500, "201", b"  ");
        assert_eq!(empty.message, "HTTP 500 (expected 201): (empty body)");
        assert_eq!(empty.body, None);
        assert_eq!(
            Failure::new("timeout", "HTTP 500 (expected 201): {}").body,
            None
        );
    }
}
