//! How a metric compares between two builds, in words.

use result::compare::{MetricCall, MIN_REPEAT};

/// "worse", "better", "no significant change", "no data", or why there is no verdict.
pub fn call(c: MetricCall) -> String {
    match c {
        MetricCall::Worse => "worse".into(),
        MetricCall::Better => "better".into(),
        MetricCall::NoChange => "no significant change".into(),
        MetricCall::NoData => "no data".into(),
        MetricCall::TooFew => format!(
            "too few repetitions for a verdict ({MIN_REPEAT} a side needed: --repeat {MIN_REPEAT})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_in_words_and_an_old_documents_words_read_back() {
        assert_eq!(call(MetricCall::NoChange), "no significant change");
        let few = call(MetricCall::TooFew);
        assert_eq!(
            few,
            "too few repetitions for a verdict (6 a side needed: --repeat 6)"
        );
        // Stored as its label; a comparison recorded with the sentence (as every one
        // before this was, with 6 a side) reads as the fact.
        assert_eq!(
            serde_json::to_value(MetricCall::TooFew).unwrap(),
            "too few repetitions"
        );
        let old: MetricCall = serde_json::from_str(
            r#""too few repetitions for a verdict (6 a side needed: --repeat 6)""#,
        )
        .unwrap();
        assert_eq!(old, MetricCall::TooFew);
        let worse: MetricCall = serde_json::from_str("\"worse\"").unwrap();
        assert_eq!(worse, MetricCall::Worse);
    }
}
