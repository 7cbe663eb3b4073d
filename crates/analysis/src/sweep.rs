//! A sweep's verdict: along each row of the grid (the last axis, the others fixed),
//! where the system stops holding — the cliff between the last value that holds and the
//! first that does not.

use result::sweep::Cell;
use result::PointStanding;

pub use result::sweep::Row;

/// Each row's cliff along the last axis of `axes` axes, from the grid's cells (a cell
/// without a value for each axis is left out).
pub fn rows(axes: usize, cells: &[Cell]) -> Vec<Row> {
    if axes == 0 {
        return Vec::new();
    }
    let cells: Vec<&Cell> = cells.iter().filter(|c| c.values.len() == axes).collect();
    let mut fixed_sets: Vec<&[f64]> = Vec::new();
    for c in &cells {
        let f = &c.values[..axes - 1];
        if !fixed_sets.contains(&f) {
            fixed_sets.push(f);
        }
    }
    fixed_sets
        .into_iter()
        .map(|fixed| {
            let row: Vec<&Cell> = cells
                .iter()
                .copied()
                .filter(|c| &c.values[..axes - 1] == fixed)
                .collect();
            row_verdict(fixed.to_vec(), &row)
        })
        .collect()
}

fn row_verdict(fixed: Vec<f64>, row: &[&Cell]) -> Row {
    let value = |p: &Cell| *p.values.last().expect("a point has a value per axis");
    let first_bad = row
        .iter()
        .position(|p| matches!(p.standing, PointStanding::Over | PointStanding::Collapsed));
    let last_holding = row[..first_bad.unwrap_or(row.len())]
        .iter()
        .rev()
        .find(|p| p.standing == PointStanding::Holds)
        .map(|p| value(p));
    let bad = first_bad.map(|i| row[i]);
    Row {
        fixed,
        last_holding,
        first_failing: bad.map(value),
        failed: bad.map(|p| p.standing),
        recorded_sentence: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PointStanding::*;

    fn p(values: &[f64], standing: PointStanding) -> Cell {
        Cell {
            values: values.to_vec(),
            standing,
            ..Cell::default()
        }
    }

    #[test]
    fn the_cliff_along_one_axis() {
        let pts = [
            p(&[50.0], Holds),
            p(&[100.0], Holds),
            p(&[150.0], Collapsed),
            p(&[200.0], Skipped),
        ];
        let r = &rows(1, &pts)[0];
        assert_eq!(
            (r.last_holding, r.first_failing, r.failed),
            (Some(100.0), Some(150.0), Some(Collapsed))
        );
        assert!(r.recorded_sentence.is_empty());
        let all = &rows(1, &pts[..2])[0];
        assert_eq!((all.last_holding, all.first_failing), (Some(100.0), None));
        assert_eq!(all.failed, None);
        let first = &rows(1, &pts[2..3])[0];
        assert_eq!(
            (first.last_holding, first.first_failing),
            (None, Some(150.0))
        );
        // A skipped point is neither a cliff nor a hold.
        let none = &rows(1, &pts[3..])[0];
        assert_eq!((none.last_holding, none.first_failing), (None, None));
    }

    #[test]
    fn a_grid_has_a_cliff_per_row() {
        let pts = [
            p(&[10.0, 50.0], Holds),
            p(&[10.0, 100.0], Holds),
            p(&[100.0, 50.0], Holds),
            p(&[100.0, 100.0], Over),
            p(&[100.0, 150.0], Holds),
        ];
        let r = rows(2, &pts);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].fixed.clone(), r[0].first_failing), (vec![10.0], None));
        // The cliff is the first point over: a later one that holds again does not move it.
        assert_eq!(
            (r[1].last_holding, r[1].first_failing, r[1].failed),
            (Some(50.0), Some(100.0), Some(Over))
        );
        assert!(rows(0, &pts).is_empty());
    }
}
