//! The SUT's connections by remote port, as a RESULT carries them: who listens there,
//! the peak, the mean while sessions were driven, and a short series.

use probe::Summary;
use result::{round2, Connection};

/// Points kept of a step's series (the highest of each stretch: a pool's ceiling).
const POINTS: usize = 60;

/// One row per remote port the SUT was ever connected to. `window`: when sessions were
/// driven, in seconds since sampling began (None: the whole step).
pub(crate) fn connections(
    s: &Summary,
    window: Option<(f64, f64)>,
    peer: &dyn Fn(u16) -> Option<String>,
) -> Vec<Connection> {
    s.connections
        .iter()
        .filter(|(_, series)| series.peak > 0)
        .map(|(&port, series)| {
            let within = |(t, _): &&(f64, u32)| window.is_none_or(|(a, b)| *t >= a && *t <= b);
            let mut inside: Vec<u32> = series.points.iter().filter(within).map(|p| p.1).collect();
            if inside.is_empty() {
                // A step shorter than the sampling: the readings there are.
                inside = series.points.iter().map(|p| p.1).collect();
            }
            let mean = match inside.len() {
                0 => 0.0,
                n => inside.iter().map(|&c| c as f64).sum::<f64>() / n as f64,
            };
            Connection {
                port,
                peer: peer(port),
                peak: series.peak,
                mean: round2(mean),
                series: thin(&series.points),
            }
        })
        .collect()
}

/// At most `POINTS` points: each the highest count of its stretch, at its stretch's end.
fn thin(points: &[(f64, u32)]) -> Vec<(f64, u32)> {
    let per = points.len().div_ceil(POINTS).max(1);
    points
        .chunks(per)
        .map(|c| {
            let top = c.iter().map(|p| p.1).max().unwrap_or(0);
            (round2(c[c.len() - 1].0), top)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use probe::sampler::Series;

    #[test]
    fn a_row_per_port_named_with_its_mean_while_driven_and_a_thinned_series() {
        let mut s = Summary::default();
        let points: Vec<(f64, u32)> = (0..300)
            .map(|i| (i as f64 * 0.2, u32::from(i >= 10) * 4))
            .collect();
        s.connections.insert(6379, Series { peak: 4, points });
        s.connections.insert(
            9,
            Series {
                peak: 0,
                points: vec![(0.0, 0)],
            },
        );
        let rows = connections(&s, Some((2.0, 59.8)), &|p| {
            (p == 6379).then(|| "redis".into())
        });
        assert_eq!(rows.len(), 1, "a port never connected to has no row");
        let r = &rows[0];
        assert_eq!(
            (r.port, r.peer.as_deref(), r.peak, r.mean),
            (6379, Some("redis"), 4, 4.0)
        );
        assert_eq!(r.series.len(), 60);
        assert_eq!(r.series[0], (0.8, 0));
        // Five readings a point: the third holds readings 10 to 14, the first at 4.
        assert_eq!(r.series[1], (1.8, 0));
        assert_eq!(r.series[2], (2.8, 4), "a stretch's highest count");
        let whole = connections(&s, None, &|_| None);
        assert_eq!(whole[0].mean, round2(4.0 * 290.0 / 300.0));
    }
}
