//! A sweep's cliffs in words: each row of the grid, where it holds up to and how the
//! first value that does not hold failed, with that point's why. A row recorded before
//! its facts were kept says the sentence it was recorded with.

use result::budget::num;
use result::sweep::{Row, Sweep};
use result::PointStanding;

/// One row's cliff in `sweep` (its axes' names, the last one moving; its cells' whys).
pub fn row(sweep: &Sweep, r: &Row) -> String {
    // A row stored before how its point failed was kept: its facts cannot say it.
    if r.first_failing.is_some() && r.failed.is_none() && !r.recorded_sentence.is_empty() {
        return r.recorded_sentence.clone();
    }
    let axes: Vec<&str> = sweep.axes.iter().map(|a| a.name.as_str()).collect();
    let along = axes.last().copied().unwrap_or("value");
    let at: Vec<String> = axes
        .iter()
        .zip(&r.fixed)
        .map(|(a, v)| format!("{a}={}", num(*v)))
        .collect();
    let at = match at.is_empty() {
        true => String::new(),
        false => format!("at {}: ", at.join(", ")),
    };
    let why = why(sweep, r).map_or(String::new(), |w| format!(" ({w})"));
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

/// Why the row's first failing point failed: its cell's why.
fn why<'a>(sweep: &'a Sweep, r: &Row) -> Option<&'a str> {
    let f = r.first_failing?;
    sweep
        .cells
        .iter()
        .find(|c| c.values.split_last() == Some((&f, &r.fixed[..])))
        .and_then(|c| c.why.as_ref()?.as_deref())
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
    use result::environment::Axis;
    use result::sweep::Cell;

    /// A sweep over `names` whose failing points (their values) say why.
    fn sweep(names: &[&str], failing: &[(&[f64], &str)]) -> Sweep {
        Sweep {
            axes: names
                .iter()
                .map(|n| Axis {
                    name: n.to_string(),
                    ..Axis::default()
                })
                .collect(),
            cells: failing
                .iter()
                .map(|(v, why)| Cell {
                    values: v.to_vec(),
                    why: Some(Some(why.to_string())),
                    ..Cell::default()
                })
                .collect(),
            ..Sweep::default()
        }
    }

    fn cliff(fixed: &[f64], holds: Option<f64>, fails: Option<(f64, PointStanding)>) -> Row {
        Row {
            fixed: fixed.to_vec(),
            last_holding: holds,
            first_failing: fails.map(|f| f.0),
            failed: fails.map(|f| f.1),
            recorded_sentence: String::new(),
        }
    }

    #[test]
    fn each_kind_of_row_in_words() {
        let one = sweep(&["messages"], &[(&[150.0], "closed"), (&[50.0], "slow")]);
        let collapses = cliff(&[], Some(100.0), Some((150.0, PointStanding::Collapsed)));
        assert_eq!(
            row(&one, &collapses),
            "holds up to messages=100; collapses at messages=150 (closed) — the cliff lies between 100 and 150"
        );
        assert_eq!(
            row(&one, &cliff(&[], None, Some((50.0, PointStanding::Over)))),
            "goes over budget already at the first value swept, messages=50 (slow): sweep lower values"
        );
        assert_eq!(
            row(&one, &cliff(&[], Some(100.0), None)),
            "holds at every value swept, up to messages=100: no cliff in this range (sweep further)"
        );
        assert_eq!(row(&one, &cliff(&[], None, None)), "no step ran to an end");
    }

    #[test]
    fn a_grid_row_names_the_axes_it_holds_fixed_and_its_own_points_why() {
        let two = sweep(
            &["subscribers", "messages"],
            &[(&[10.0, 100.0], "another row's"), (&[100.0, 100.0], "slow")],
        );
        let over = cliff(&[100.0], Some(50.0), Some((100.0, PointStanding::Over)));
        assert_eq!(
            row(&two, &over),
            "at subscribers=100: holds up to messages=50; goes over budget at messages=100 (slow) — the cliff lies between 50 and 100"
        );
    }

    /// A row stored before how its point failed was kept says its recorded sentence; one
    /// with its facts is said from them, whatever sentence a file held beside them.
    #[test]
    fn a_row_recorded_in_words_keeps_them_and_one_with_facts_is_said_anew() {
        let one = sweep(&["messages"], &[]);
        let old: Row = serde_json::from_str(
            r#"{"fixed":[],"last_holding":100.0,"first_failing":150.0,"sentence":"as it was said"}"#,
        )
        .unwrap();
        assert_eq!(row(&one, &old), "as it was said");
        assert_eq!(
            serde_json::to_value(&old).unwrap()["sentence"],
            "as it was said"
        );
        let mut new = cliff(&[], Some(1.0), None);
        assert!(serde_json::to_value(&new)
            .unwrap()
            .get("sentence")
            .is_none());
        new.recorded_sentence = "words of another day".into();
        assert!(row(&one, &new).starts_with("holds at every value swept"));
    }
}
