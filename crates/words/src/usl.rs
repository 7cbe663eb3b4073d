//! A Universal Scalability Law fit in words: its parameters and predicted peak, why it is
//! no prediction to trust, or why none was made.

use result::budget::num;
use result::ladder::{UslNote, UslReading, UslRefusal};
use result::words::sessions;

/// The fit's line in the verdict: "USL: σ = 0.509, κ = 0.00596, λ = 2 turns/s; predicted
/// peak at 9 sessions, 3.27 turns/s (R² 0.770) — …", or why none was made.
pub fn line(u: &UslReading) -> String {
    let u = match u {
        UslReading::Refused { refused } => {
            return format!("USL: not fitted — {}", refusal(refused))
        }
        UslReading::Fitted(u) => u,
    };
    let peak = u
        .peak_concurrency
        .map_or("none (no coherency cost seen)".to_string(), |p| {
            format!(
                "at {p:.0} sessions, {} turns/s",
                u.peak_throughput.map_or("?".to_string(), num)
            )
        });
    let note = u
        .note
        .as_ref()
        .map_or(String::new(), |n| format!(" — {}", note(n)));
    format!(
        "USL: σ = {}, κ = {}, λ = {} turns/s; predicted peak {peak} (R² {:.3}){note}",
        num(u.sigma),
        num(u.kappa),
        num(u.lambda),
        u.r2
    )
}

/// Why no fit was made.
pub fn refusal(r: &UslRefusal) -> String {
    match r {
        UslRefusal::TooFewSteps { steps } => format!(
            "the USL needs at least 4 steps with throughput; this ladder has {steps}"
        ),
        UslRefusal::Undetermined => {
            "the steps do not determine the USL (concurrency levels too alike)".into()
        }
        UslRefusal::NonPositive => "the fit gave a non-positive single-session throughput; the data does not follow the USL".into(),
        UslRefusal::Unread => "no ladder was analysed".into(),
    }
}

/// Why a fit is no prediction to trust.
pub fn note(n: &UslNote) -> String {
    match n {
        UslNote::PeakBelowMeasured { peak, measured } => format!(
            "the fit's peak ({peak:.1} turns/s) lies below the measured {measured:.1}: a poor fit, not a prediction"
        ),
        UslNote::PeakBeyondPlateau { peak, from } => format!(
            "the fit's peak at {peak:.0} sessions lies beyond the measured plateau from {}: not a prediction to trust",
            sessions(*from)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::ladder::Usl;

    #[test]
    fn a_fit_is_said_with_its_peak_and_why_not_to_trust_it() {
        let u = Usl {
            lambda: 2.0,
            sigma: 0.509,
            kappa: 0.00596,
            peak_concurrency: Some(9.2),
            peak_throughput: Some(3.27),
            r2: 0.77,
            points: 6,
            note: Some(UslNote::PeakBeyondPlateau {
                peak: 9.2,
                from: 2.0,
            }),
        };
        assert_eq!(line(&UslReading::Fitted(u)), "USL: σ = 0.509, κ = 0.00596, λ = 2 turns/s; predicted peak at 9 sessions, 3.27 turns/s (R² 0.770) — the fit's peak at 9 sessions lies beyond the measured plateau from 2 sessions: not a prediction to trust");
        let below = UslNote::PeakBelowMeasured {
            peak: 3.06,
            measured: 4.24,
        };
        assert_eq!(note(&below), "the fit's peak (3.1 turns/s) lies below the measured 4.2: a poor fit, not a prediction");
    }

    #[test]
    fn a_refused_fit_says_why() {
        let too_few = UslReading::Refused {
            refused: UslRefusal::TooFewSteps { steps: 3 },
        };
        assert_eq!(
            line(&too_few),
            "USL: not fitted — the USL needs at least 4 steps with throughput; this ladder has 3"
        );
        assert!(refusal(&UslRefusal::Undetermined).contains("too alike"));
        assert!(refusal(&UslRefusal::NonPositive).contains("non-positive"));
        // A run that ended before its analysis says so, not a count of no steps.
        assert_eq!(
            line(&UslReading::default()),
            "USL: not fitted — no ladder was analysed"
        );
    }
}
