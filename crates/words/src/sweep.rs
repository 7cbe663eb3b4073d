//! A sweep's cliffs in words: each row of the grid, where it holds up to and how the
//! first value that does not hold failed. A row recorded before its facts were kept says
//! the sentence it was recorded with.

use result::budget::num;
use result::sweep::Row;
use result::PointStanding;

/// One row's cliff, with `axes` the sweep's axes' names in order (the last one moving).
pub fn row(axes: &[String], r: &Row) -> String {
    if !r.recorded_sentence.is_empty() {
        return r.recorded_sentence.clone();
    }
    let along = axes.last().map_or("value", String::as_str);
    let at: Vec<String> = axes
        .iter()
        .zip(&r.fixed)
        .map(|(a, v)| format!("{a}={}", num(*v)))
        .collect();
    let at = match at.is_empty() {
        true => String::new(),
        false => format!("at {}: ", at.join(", ")),
    };
    let why = r.why.as_ref().map_or(String::new(), |w| format!(" ({w})"));
    let failed = r.failed.map_or("does not hold", failed);
    match (r.last_holding, r.first_failing) {
        (Some(h), Some(f)) => format!(
            "{at}holds up to {along}={}; {failed} at {along}={}{why} — the cliff lies between {} and {}",
            num(h),
            num(f),
            num(h),
            num(f)
        ),
        (None, Some(f)) => format!(
            "{at}{failed} already at the first value swept, {along}={}{why}: sweep lower values",
            num(f)
        ),
        (Some(h), None) => format!(
            "{at}holds at every value swept, up to {along}={}: no cliff in this range (sweep further)",
            num(h)
        ),
        (None, None) => format!("{at}no step ran to an end"),
    }
}

fn failed(s: PointStanding) -> &'static str {
    match s {
        PointStanding::Collapsed => "collapses",
        _ => "goes over budget",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn cliff(fixed: &[f64], holds: Option<f64>, fails: Option<(f64, PointStanding)>) -> Row {
        Row {
            fixed: fixed.to_vec(),
            last_holding: holds,
            first_failing: fails.map(|f| f.0),
            failed: fails.map(|f| f.1),
            why: fails.map(|_| "closed".to_string()),
            recorded_sentence: String::new(),
        }
    }

    #[test]
    fn each_kind_of_row_in_words() {
        let one = axes(&["messages"]);
        let collapses = cliff(&[], Some(100.0), Some((150.0, PointStanding::Collapsed)));
        assert_eq!(
            row(&one, &collapses),
            "holds up to messages=100; collapses at messages=150 (closed) — the cliff lies between 100 and 150"
        );
        assert_eq!(
            row(&one, &cliff(&[], None, Some((50.0, PointStanding::Over)))),
            "goes over budget already at the first value swept, messages=50 (closed): sweep lower values"
        );
        assert_eq!(
            row(&one, &cliff(&[], Some(100.0), None)),
            "holds at every value swept, up to messages=100: no cliff in this range (sweep further)"
        );
        assert_eq!(row(&one, &cliff(&[], None, None)), "no step ran to an end");
    }

    #[test]
    fn a_grid_row_names_the_axes_it_holds_fixed() {
        let two = axes(&["subscribers", "messages"]);
        let over = cliff(&[100.0], Some(50.0), Some((100.0, PointStanding::Over)));
        assert_eq!(
            row(&two, &over),
            "at subscribers=100: holds up to messages=50; goes over budget at messages=100 (closed) — the cliff lies between 50 and 100"
        );
    }

    #[test]
    fn a_row_recorded_in_words_keeps_them() {
        let old: Row = serde_json::from_str(
            r#"{"fixed":[],"last_holding":100.0,"first_failing":null,"sentence":"as it was said"}"#,
        )
        .unwrap();
        assert_eq!(row(&axes(&["messages"]), &old), "as it was said");
        let back = serde_json::to_value(&old).unwrap();
        assert_eq!(back["sentence"], "as it was said");
        // A row made now stores no sentence.
        let new = serde_json::to_value(cliff(&[], Some(1.0), None)).unwrap();
        assert!(new.get("sentence").is_none(), "{new}");
    }
}
