//! A sweep's verdict: along each row of the grid (the last axis, the others fixed),
//! where the system stops holding — the cliff between the last value that holds and the
//! first that does not.

use serde::Serialize;

/// One point of a sweep, as the verdict needs it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The value of each axis, in the axes' order.
    pub values: Vec<f64>,
    /// "holds", "over", "collapsed", or "skipped" (not run: a smaller value collapsed).
    pub standing: String,
    /// Why it collapsed or is over, in words.
    pub why: Option<String>,
}

pub use result::sweep::Row;

fn num(v: f64) -> String {
    crate::budget::num(v)
}

/// Each row's cliff along the last axis, with `axes` the axes' names in order.
pub fn rows(axes: &[String], points: &[Point]) -> Vec<Row> {
    let Some(along) = axes.last() else {
        return Vec::new();
    };
    let mut fixed_sets: Vec<Vec<f64>> = Vec::new();
    for p in points {
        let f = p.values[..p.values.len() - 1].to_vec();
        if !fixed_sets.contains(&f) {
            fixed_sets.push(f);
        }
    }
    fixed_sets
        .into_iter()
        .map(|fixed| {
            let row: Vec<&Point> = points
                .iter()
                .filter(|p| p.values[..p.values.len() - 1] == fixed[..])
                .collect();
            row_verdict(axes, along, fixed, &row)
        })
        .collect()
}

fn row_verdict(axes: &[String], along: &str, fixed: Vec<f64>, row: &[&Point]) -> Row {
    let value = |p: &Point| *p.values.last().expect("a point has a value per axis");
    let first_bad = row
        .iter()
        .position(|p| p.standing == "over" || p.standing == "collapsed");
    let last_holding = row[..first_bad.unwrap_or(row.len())]
        .iter()
        .rev()
        .find(|p| p.standing == "holds")
        .map(|p| value(p));
    let first_failing = first_bad.map(|i| value(row[i]));
    let at: Vec<String> = axes
        .iter()
        .zip(&fixed)
        .map(|(a, v)| format!("{a}={}", num(*v)))
        .collect();
    let at = if at.is_empty() {
        String::new()
    } else {
        format!("at {}: ", at.join(", "))
    };
    let sentence = match (last_holding, first_bad) {
        (Some(h), Some(i)) => format!(
            "{at}holds up to {along}={}; {} at {along}={}{} — the cliff lies between {} and {}",
            num(h),
            word(&row[i].standing),
            num(value(row[i])),
            row[i].why.as_ref().map_or(String::new(), |w| format!(" ({w})")),
            num(h),
            num(value(row[i]))
        ),
        (None, Some(i)) => format!(
            "{at}{} already at the first value swept, {along}={}{}: sweep lower values",
            word(&row[i].standing),
            num(value(row[i])),
            row[i].why.as_ref().map_or(String::new(), |w| format!(" ({w})"))
        ),
        (Some(h), None) => format!(
            "{at}holds at every value swept, up to {along}={}: no cliff in this range (sweep further)",
            num(h)
        ),
        (None, None) => format!("{at}no step ran to an end"),
    };
    Row {
        fixed,
        last_holding,
        first_failing,
        sentence,
    }
}

fn word(standing: &str) -> &'static str {
    match standing {
        "collapsed" => "collapses",
        _ => "goes over budget",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(values: &[f64], standing: &str) -> Point {
        Point {
            values: values.to_vec(),
            standing: standing.into(),
            why: (standing != "holds").then(|| "closed".to_string()),
        }
    }

    #[test]
    fn the_cliff_along_one_axis() {
        let axes = vec!["messages".to_string()];
        let pts = [
            p(&[50.0], "holds"),
            p(&[100.0], "holds"),
            p(&[150.0], "collapsed"),
            p(&[200.0], "skipped"),
        ];
        let r = &rows(&axes, &pts)[0];
        assert_eq!(
            (r.last_holding, r.first_failing),
            (Some(100.0), Some(150.0))
        );
        assert_eq!(
            r.sentence,
            "holds up to messages=100; collapses at messages=150 (closed) — the cliff lies between 100 and 150"
        );
        let all = rows(&axes, &pts[..2]);
        assert!(all[0].sentence.contains("no cliff"), "{}", all[0].sentence);
        let first = rows(&axes, &pts[2..3]);
        assert!(
            first[0].sentence.contains("sweep lower"),
            "{}",
            first[0].sentence
        );
    }

    #[test]
    fn a_grid_has_a_cliff_per_row() {
        let axes = vec!["subscribers".to_string(), "messages".to_string()];
        let pts = [
            p(&[10.0, 50.0], "holds"),
            p(&[10.0, 100.0], "holds"),
            p(&[100.0, 50.0], "holds"),
            p(&[100.0, 100.0], "over"),
        ];
        let r = rows(&axes, &pts);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].fixed, vec![10.0]);
        assert!(r[0]
            .sentence
            .starts_with("at subscribers=10: holds at every value"));
        assert_eq!(r[1].first_failing, Some(100.0));
        assert!(r[1].sentence.contains("goes over budget at messages=100"));
    }
}
