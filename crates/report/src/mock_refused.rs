//! The requests the mock refused, in words, said before anything else of a step: a bot
//! whose speech requests ask for a format the mock does not produce fails every call, and
//! the calls' failures follow from the refusal, so the refusal comes first.

use result::MockRefusals;

/// A line for each kind of refusal ("the mock refused 2 speech requests with 400:
/// …"), and one for those only counted; empty when nothing was refused.
pub fn lines(m: &MockRefusals) -> Vec<String> {
    let mut out: Vec<String> = m
        .kinds
        .iter()
        .map(|k| {
            format!(
                "the mock refused {} with {}: {}",
                crate::words::count(k.count, &k.what),
                k.status,
                k.message
            )
        })
        .collect();
    if m.more > 0 {
        out.push(format!(
            "the mock refused {} more of other kinds (RESULT's mock_refused keeps the first eight kinds word for word)",
            crate::words::count(m.more, "request")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::MockRefusal;

    #[test]
    fn each_kind_is_said_with_its_count_status_and_words() {
        let m = MockRefusals {
            kinds: vec![MockRefusal {
                what: "speech request".into(),
                status: 400,
                message: "response_format \"opus\" is not produced by this mock".into(),
                count: 2,
            }],
            more: 1,
        };
        assert_eq!(
            lines(&m),
            [
                "the mock refused 2 speech requests with 400: response_format \"opus\" is not produced by this mock",
                "the mock refused 1 request more of other kinds (RESULT's mock_refused keeps the first eight kinds word for word)"
            ]
        );
        assert!(lines(&MockRefusals::default()).is_empty());
    }
}
