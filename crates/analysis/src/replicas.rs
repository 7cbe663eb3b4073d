//! Scaling over replicas: how much of N times one instance's throughput N instances
//! give (throughput at N ÷ (N × throughput at 1)), and the memory of each, per variant of
//! the SUT (an arm, or the SUT alone).

/// One variant at one replica count: its highest throughput over the ladder.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub variant: String,
    pub replicas: usize,
    pub peak_turns_per_s: f64,
    pub rss_mb_per_instance: f64,
    /// Its throughput stopped growing within the ladder (a wall, or a collapse): its
    /// peak is what it can do, not what the ladder asked of it.
    pub walled: bool,
}

pub use result::arms::Scaling;

/// One variant's ladder as the scaling reads it: its highest throughput over the levels
/// that did not collapse, its memory per instance, and whether it found its wall.
pub fn measure(d: &result::ladder::LadderDoc) -> Measured {
    let ok = d.steps.iter().filter(|s| s.outcome.is_ok());
    let peak = ok
        .clone()
        .map(crate::verdict::turns_per_s)
        .fold(0.0, f64::max);
    let n = d.replicas.unwrap_or(1);
    let rss = ok.map(|s| s.peak_rss_mb).fold(0.0, f64::max) / n as f64;
    Measured {
        variant: d.variant.clone().unwrap_or_else(|| "sut".into()),
        replicas: n,
        peak_turns_per_s: peak,
        rss_mb_per_instance: (rss * 100.0).round() / 100.0,
        walled: d
            .ladder()
            .and_then(|a| a.verdict.as_ref())
            .is_some_and(walled),
    }
}

/// Whether a ladder's throughput stopped growing within it: a wall, or a collapse.
fn walled(v: &result::ladder::Verdict) -> bool {
    v.collapse.is_some()
        || v.wall.kind != result::WallKind::None
        || v.wall.from.is_some()
        || v.plateau.is_some()
}

/// Each variant's efficiency against its own fewest replicas.
pub fn scaling(rows: &[Measured]) -> Vec<Scaling> {
    rows.iter()
        .map(|r| {
            let base = rows
                .iter()
                .filter(|b| b.variant == r.variant && b.peak_turns_per_s > 0.0)
                .min_by_key(|b| b.replicas);
            let efficiency = base.filter(|b| b.walled).map(|b| {
                let ideal = b.peak_turns_per_s * r.replicas as f64 / b.replicas as f64;
                (r.peak_turns_per_s / ideal * 1000.0).round() / 1000.0
            });
            Scaling {
                variant: r.variant.clone(),
                replicas: r.replicas,
                peak_turns_per_s: r.peak_turns_per_s,
                efficiency,
                unwalled_base: base.filter(|b| !b.walled).map(|b| b.replicas),
                rss_mb_per_instance: r.rss_mb_per_instance,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(v: &str, n: usize, x: f64) -> Measured {
        Measured {
            variant: v.into(),
            replicas: n,
            peak_turns_per_s: x,
            rss_mb_per_instance: 10.0,
            walled: true,
        }
    }

    #[test]
    fn efficiency_against_the_fewest_replicas_of_the_same_variant() {
        let s = scaling(&[
            m("a", 1, 10.0),
            m("a", 2, 19.0),
            m("a", 4, 30.0),
            m("b", 2, 8.0),
            m("b", 4, 16.0),
        ]);
        let e: Vec<Option<f64>> = s.iter().map(|s| s.efficiency).collect();
        assert_eq!(
            e,
            vec![Some(1.0), Some(0.95), Some(0.75), Some(1.0), Some(1.0)]
        );
    }

    #[test]
    fn no_efficiency_when_the_fewest_replicas_never_hit_a_wall() {
        // One replica still scaling at the top of the ladder: two give the same turns/s
        // because the ladder asked no more, not because they scale at 50 %.
        let mut one = m("free", 1, 12.7);
        one.walled = false;
        let s = scaling(&[one, m("free", 2, 12.7)]);
        assert_eq!((s[1].efficiency, s[1].unwalled_base), (None, Some(1)));
    }
}
