//! A step's checks in words: the one place a threshold's or a budget's check is said, for
//! the terminal's lines, JUnit's cases and the CI summary, from the typed list the exit
//! code reads (`result::Check`).

use crate::num::cell;
use result::budget::{num, words};
use result::{Check, CheckFrom};

/// A check over its limit, as the terminal says it after "threshold crossed: ":
/// "p99_session_ms 2512.4 > threshold 2000", "budget RSS MB 4210 > 4096".
pub fn breach(c: &Check) -> String {
    let value = c.value.unwrap_or_default();
    match c.from {
        CheckFrom::Budget => {
            let b = result::Breach {
                budget: c.name.clone(),
                value,
                limit: c.limit,
            };
            format!("budget {}", b.text())
        }
        CheckFrom::Threshold => format!("{} {value:.1} > threshold {}", c.name, c.limit),
    }
}

/// A check as a JUnit case names it: "p99_session_ms ≤ 2000", "budget RSS MB ≤ 4096".
pub fn case_name(c: &Check) -> String {
    match c.from {
        CheckFrom::Threshold => format!("{} ≤ {}", c.name, num(c.limit)),
        CheckFrom::Budget => format!("budget {} ≤ {}", words(&c.name), num(c.limit)),
    }
}

/// What the check measured: "p99_session_ms 1886", "RSS MB 1721".
pub fn measured(c: &Check) -> String {
    match c.from {
        CheckFrom::Threshold => format!("{} {}", c.name, cell(c.value)),
        CheckFrom::Budget => format!("{} {}", words(&c.name), cell(c.value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, from: CheckFrom, value: f64, limit: f64) -> Check {
        Check {
            name: name.into(),
            from,
            limit,
            value: Some(value),
            over: value > limit,
        }
    }

    /// The words the terminal has always said, now made from the typed check.
    #[test]
    fn a_threshold_and_a_budget_are_said_as_before() {
        let t = check("p99_session_ms", CheckFrom::Threshold, 1886.24, 100.0);
        assert_eq!(breach(&t), "p99_session_ms 1886.2 > threshold 100");
        assert_eq!(case_name(&t), "p99_session_ms ≤ 100");
        assert_eq!(measured(&t), "p99_session_ms 1886");
        let b = check("rss_mb", CheckFrom::Budget, 4210.0, 4096.0);
        assert_eq!(breach(&b), "budget RSS MB 4210 > 4096");
        assert_eq!(case_name(&b), "budget RSS MB ≤ 4096");
        assert_eq!(measured(&b), "RSS MB 4210");
    }
}
