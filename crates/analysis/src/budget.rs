//! Which budgets a step breaks. A step holds when it is within every budget, is over
//! budget when it breaks one (which, by how much), and has collapsed when its outcome says
//! so. Latency budgets judge a service on how it degrades, not on what it costs at one
//! session: `latency_vs_single` compares a level with the same SUT at one. The budget
//! itself, and a breach, are types of `result`.

use result::budget::CheckFrom;
pub use result::budget::{num, words, Breach, Budget, Check, BUDGETS};

/// The figures of one step a budget can judge.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub inflation: Option<f64>,
    pub p50_session_ms: Option<f64>,
    pub p99_turn_ms: Option<f64>,
    pub p99_ttft_ms: Option<f64>,
    pub probe_p99_ms: Option<f64>,
    pub error_share: f64,
    pub rss_mb: f64,
    /// The tree's peak PSS, where it was read.
    pub pss_mb: Option<f64>,
    /// Voice calls: response p95 and the share of the replies' playing time that stalled.
    pub response_p95_ms: Option<f64>,
    pub stall_share: Option<f64>,
    /// LiveKit rooms: the agent's readiness, p99.
    pub agent_p99_ms: Option<f64>,
}

/// Every budget in force, judged on `f` (a check each: its limit, the step's figure, none
/// where the step has no such figure, and whether it is over); `single` is the first
/// level's p50 session time.
pub fn checks(b: &Budget, f: &Figures, single: Option<f64>) -> Vec<Check> {
    let vs_single = match (f.p50_session_ms, single) {
        (Some(p), Some(s)) if s > 0.0 => Some(p / s),
        _ => None,
    };
    let measured = [
        f.inflation,
        vs_single,
        f.p99_turn_ms,
        f.p99_ttft_ms,
        f.probe_p99_ms,
        Some(f.error_share),
        Some(f.rss_mb),
        f.pss_mb,
        f.response_p95_ms,
        f.stall_share,
        f.agent_p99_ms,
    ];
    b.entries()
        .iter()
        .zip(measured)
        .filter_map(|(&(budget, limit), value)| {
            let limit = limit?;
            Some(Check {
                name: budget.to_string(),
                from: CheckFrom::Budget,
                limit,
                value,
                over: value.is_some_and(|v| v > limit + 1e-9),
            })
        })
        .collect()
}

/// The budgets `f` breaks; `single` is the first level's p50 session time.
pub fn breaches(b: &Budget, f: &Figures, single: Option<f64>) -> Vec<Breach> {
    checks(b, f, single)
        .iter()
        .filter_map(Check::breach)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::Budget;
    use words::pct;

    #[test]
    fn a_small_share_is_not_said_as_none() {
        assert_eq!(
            (
                pct(0.0),
                pct(0.0003),
                pct(0.003),
                pct(0.0094),
                pct(0.0096),
                pct(0.35)
            ),
            (
                "0 %".into(),
                "< 0.1 %".into(),
                "0.3 %".into(),
                "0.9 %".into(),
                "1 %".into(),
                "35 %".into()
            )
        );
    }

    #[test]
    fn breaches_name_the_budget_and_the_amount() {
        let b = Budget {
            latency_vs_single: Some(2.0),
            rss_mb: Some(100.0),
            ..Budget::default()
        };
        let f = Figures {
            inflation: Some(3.1),
            p50_session_ms: Some(900.0),
            error_share: 0.0,
            rss_mb: 50.0,
            ..Figures::default()
        };
        let got = breaches(&b, &f, Some(300.0));
        let texts: Vec<String> = got.iter().map(Breach::text).collect();
        assert_eq!(
            texts,
            ["latency inflation 3.1 > 2", "latency vs 1 session 3 > 2"]
        );
        assert!(breaches(&Budget::default(), &Figures::default(), None).is_empty());
        let failing = Figures {
            error_share: 0.25,
            ..Figures::default()
        };
        assert_eq!(
            breaches(&Budget::default(), &failing, None)[0].budget,
            "error_rate"
        );
    }

    /// A worker whose job processes share its models: 1,700 MB by summed RSS, 800 by
    /// PSS. `pss_mb=700` is broken by the PSS; `pss_mb=900` holds though the RSS is far
    /// over it.
    #[test]
    fn a_pss_budget_judges_the_pss_not_the_summed_rss() {
        let f = Figures {
            rss_mb: 1700.0,
            pss_mb: Some(800.0),
            ..Figures::default()
        };
        let mut b = Budget::none();
        b.apply_flag("pss_mb=700").unwrap();
        let texts: Vec<String> = breaches(&b, &f, None).iter().map(Breach::text).collect();
        assert_eq!(texts, ["PSS MB 800 > 700"]);
        b.apply_flag("pss_mb=900").unwrap();
        assert!(breaches(&b, &f, None).is_empty());
        assert_eq!(b.describe(), "PSS MB ≤ 900");
    }

    #[test]
    fn calls_break_the_voice_budget_not_the_text_one() {
        let b = Budget::default().for_calls();
        let f = Figures {
            response_p95_ms: Some(2100.0),
            stall_share: Some(0.004),
            ..Figures::default()
        };
        let texts: Vec<String> = breaches(&b, &f, None).iter().map(Breach::text).collect();
        assert_eq!(texts, ["response p95 ms 2100 > 1500"]);
        let stalled = Figures {
            stall_share: Some(0.03),
            ..f
        };
        assert_eq!(
            breaches(&b, &stalled, None)[1].text(),
            "stall share 0.03 > 0.01"
        );
    }
}
