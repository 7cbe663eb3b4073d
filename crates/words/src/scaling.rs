//! Scaling over replicas in words: each replica count's most turns a second, how much of
//! linear that is, and its memory per instance.

use result::arms::Scaling;
use result::budget::num;

/// "2 replicas: 11.9 turns/s at most, 96 % of linear, 70.2 MB each".
pub fn line(s: &Scaling) -> String {
    format!(
        "{} replica{}: {} turns/s at most{}, {} MB each",
        s.replicas,
        if s.replicas == 1 { "" } else { "s" },
        num(s.peak_turns_per_s),
        match (s.efficiency, s.unwalled_base) {
            _ if s.replicas == 1 => String::new(),
            (Some(e), _) => format!(", {:.0} % of linear", e * 100.0),
            (None, Some(b)) => format!(
                " (scaling not measured: {b} replica{} found no wall within the ladder — widen it)",
                if b == 1 { "" } else { "s" }
            ),
            (None, None) => String::new(),
        },
        num(s.rss_mb_per_instance)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled(replicas: usize, x: f64, efficiency: Option<f64>) -> Scaling {
        Scaling {
            variant: "a".into(),
            replicas,
            peak_turns_per_s: x,
            efficiency,
            unwalled_base: None,
            rss_mb_per_instance: 10.0,
        }
    }

    #[test]
    fn a_replica_count_in_words() {
        assert_eq!(
            line(&scaled(2, 19.0, Some(0.95))),
            "2 replicas: 19 turns/s at most, 95 % of linear, 10 MB each"
        );
        assert_eq!(
            line(&scaled(1, 10.0, Some(1.0))),
            "1 replica: 10 turns/s at most, 10 MB each"
        );
        let unwalled = Scaling {
            unwalled_base: Some(1),
            ..scaled(2, 12.7, None)
        };
        assert_eq!(line(&unwalled), "2 replicas: 12.7 turns/s at most (scaling not measured: 1 replica found no wall within the ladder — widen it), 10 MB each");
    }
}
