//! A soak in words: its headline (what leaks, how fast, what the drain gave back), why
//! each resource reads as it does, and the rule a leak is judged by. A soak recorded
//! before its readings were facts says the words it was recorded with.

use result::budget::num;
use result::soak::{Leak, LeakReading, LeakRule, LeakVerdict, ResourceFloor, SoakAnalysis};

/// The leak rule in words, from its figures (`LeakRule`), as every soak document states
/// it.
pub fn stated_rule() -> String {
    format!(
        "per resource, on the load phase after the warm-up: {} equal-time blocks, each block's minimum; leak when Mann–Kendall on the block minima gives p < {}, Sen's slope > 0, the OLS slope of the block minima has a {} interval above zero and the growth over the load phase reaches the floor ({}); no leak when p ≥ {} or the OLS interval's upper end stays under that floor; else unknown",
        LeakRule::BLOCKS,
        LeakRule::LEAK_P,
        crate::pct(LeakRule::INTERVAL),
        floors(LeakRule::FLOORS),
        LeakRule::NO_LEAK_P
    )
}

/// "RSS and cgroup memory: 2 MB + 1 % of the start; threads 2; open files 4": resources
/// with the same floor said together.
fn floors(all: &[ResourceFloor]) -> String {
    let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
    for r in all {
        let said = match (r.kb, r.share > 0.0) {
            (true, true) => format!(
                ": {} + {} of the start",
                floor_kb(r.floor),
                crate::pct(r.share)
            ),
            (true, false) => format!(": {}", floor_kb(r.floor)),
            (false, _) => format!(" {}", num(r.floor)),
        };
        match groups.last_mut() {
            Some((names, s)) if *s == said => names.push(r.resource),
            _ => groups.push((vec![r.resource], said)),
        }
    }
    groups
        .iter()
        .map(|(names, said)| format!("{}{said}", names.join(" and ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A floor as the rule states it: "2 MB", "512 KB".
fn floor_kb(x: f64) -> String {
    match x >= 1024.0 {
        true => format!("{} MB", num(x / 1024.0)),
        false => format!("{} KB", num(x)),
    }
}

/// The soak's headline: worded from its readings, or as recorded before there were any.
pub fn headline(a: &SoakAnalysis) -> String {
    match recorded(a) {
        true => a.recorded_headline.clone(),
        false => said(a),
    }
}

/// The rule its leaks were judged by.
pub fn rule(a: &SoakAnalysis) -> String {
    match recorded(a) && !a.recorded_rule.is_empty() {
        true => a.recorded_rule.clone(),
        false => stated_rule(),
    }
}

/// A soak recorded before its readings were facts: words and no reading.
fn recorded(a: &SoakAnalysis) -> bool {
    !a.recorded_headline.is_empty() && a.leaks.iter().all(|l| l.reading.is_none())
}

/// What a resource's series says, as the soak's table says it.
pub fn verdict(v: LeakVerdict) -> &'static str {
    match v {
        LeakVerdict::Leak => "leak",
        LeakVerdict::NoLeak => "no leak",
        LeakVerdict::Unknown => "unknown",
    }
}

/// Why one resource reads as it does.
pub fn why(l: &Leak) -> String {
    let Some(r) = l.reading else {
        return l.recorded_why.clone();
    };
    match r {
        LeakReading::TooFewSamples { samples, needed } => format!("{samples} samples after the warm-up; {needed} are needed (a longer soak, or a shorter --every)"),
        LeakReading::NoSpread => "the series has no spread in time".into(),
        LeakReading::Rises { p, growth, floor } => format!("the floor of the series rises (Mann–Kendall p {p:.2e}); {growth:.1} over the load phase ≥ {floor} "),
        LeakReading::NoTrend { p } => format!("no trend in the floor of the series (Mann–Kendall p {p:.2})"),
        LeakReading::TooSmall { upper, floor } => format!("a trend too small to matter: at most {upper:.1} over the load phase ({} upper bound) against {floor}", crate::pct(LeakRule::INTERVAL)),
        LeakReading::Unclear { p, growth, floor } => format!("a trend that is neither clear nor ruled out (Mann–Kendall p {p:.3}, growth {growth:.1} against {floor}): soak longer"),
    }
}

/// KB as people read it: 812 KB, 62.9 MB, 8.1 GB.
fn kb(v: f64) -> String {
    match v.abs() {
        a if a >= 1024.0 * 1024.0 => format!("{:.1} GB", v / 1048576.0),
        a if a >= 1024.0 => format!("{:.1} MB", v / 1024.0),
        _ => format!("{v:.0} KB"),
    }
}

fn said(a: &SoakAnalysis) -> String {
    let (leaks, sessions_per_s) = (&a.leaks, a.sessions_per_s);
    if leaks.is_empty() {
        return "nothing to judge: no sample of the load after the warm-up (did the soak end before its warm-up was over?)".into();
    }
    let with = |v: LeakVerdict| -> Vec<&Leak> { leaks.iter().filter(|l| l.verdict == v).collect() };
    let names = |ls: &[&Leak]| {
        ls.iter()
            .map(|l| l.resource.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    for l in with(LeakVerdict::Leak) {
        let memory = l.resource.contains("RSS") || l.resource.contains("memory");
        let amount = |v: f64| if memory { kb(v) } else { format!("{v:.1}") };
        let per_1000 = l.sen_per_1000_sessions.map_or(String::new(), |v| {
            format!("{} per 1,000 sessions, ", amount(v))
        });
        let back = l.drain_return.map_or(String::new(), |r| {
            if r < 0.05 {
                format!("; none of it came back in the drain ({:.0} %)", r * 100.0)
            } else {
                format!("; {:.0} % of the growth came back in the drain", r * 100.0)
            }
        });
        parts.push(format!(
            "LEAK in {}: {per_1000}{} an hour{back}",
            l.resource,
            amount(l.sen_per_hour.unwrap_or(0.0))
        ));
    }
    let none = with(LeakVerdict::NoLeak);
    if !none.is_empty() {
        parts.push(format!("no leak in {}", names(&none)));
    }
    let unknown = with(LeakVerdict::Unknown);
    if !unknown.is_empty() {
        parts.push(format!(
            "unknown for {} ({})",
            names(&unknown),
            why(unknown[0])
        ));
    }
    format!(
        "{} (at {:.1} sessions a second)",
        parts.join("; "),
        sessions_per_s
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leak(verdict: LeakVerdict, reading: LeakReading) -> Leak {
        Leak {
            resource: "RSS".into(),
            verdict,
            reading: Some(reading),
            ..Leak::default()
        }
    }

    #[test]
    fn each_reading_says_why_with_its_figures() {
        let said = |r| why(&leak(LeakVerdict::Unknown, r));
        assert_eq!(
            said(LeakReading::TooFewSamples {
                samples: 10,
                needed: 24
            }),
            "10 samples after the warm-up; 24 are needed (a longer soak, or a shorter --every)"
        );
        assert_eq!(
            said(LeakReading::Rises { p: 1.5e-5, growth: 4096.0, floor: 2048.0 }),
            "the floor of the series rises (Mann–Kendall p 1.50e-5); 4096.0 over the load phase ≥ 2048 "
        );
        assert_eq!(
            said(LeakReading::NoTrend { p: 0.31 }),
            "no trend in the floor of the series (Mann–Kendall p 0.31)"
        );
        assert_eq!(
            said(LeakReading::TooSmall { upper: 900.04, floor: 2048.0 }),
            "a trend too small to matter: at most 900.0 over the load phase (95 % upper bound) against 2048"
        );
        assert!(said(LeakReading::Unclear {
            p: 0.02,
            growth: 3.0,
            floor: 2.0
        })
        .ends_with("against 2): soak longer"));
    }

    #[test]
    fn the_headline_names_the_leak_its_rate_and_what_else_held() {
        let mut rss = leak(
            LeakVerdict::Leak,
            LeakReading::Rises {
                p: 1e-6,
                growth: 9e3,
                floor: 2e3,
            },
        );
        rss.sen_per_hour = Some(460_800.0);
        rss.sen_per_1000_sessions = Some(64_000.0);
        rss.drain_return = Some(0.01);
        let mut threads = leak(LeakVerdict::NoLeak, LeakReading::NoTrend { p: 0.5 });
        threads.resource = "threads".into();
        let mut fds = leak(
            LeakVerdict::Unknown,
            LeakReading::Unclear {
                p: 0.02,
                growth: 3.0,
                floor: 4.0,
            },
        );
        fds.resource = "open files".into();
        let a = SoakAnalysis {
            sessions_per_s: 2.0,
            leaks: vec![rss, threads, fds],
            ..SoakAnalysis::default()
        };
        assert_eq!(
            headline(&a),
            "LEAK in RSS: 62.5 MB per 1,000 sessions, 450.0 MB an hour; none of it came back in the drain (1 %); no leak in threads; unknown for open files (a trend that is neither clear nor ruled out (Mann–Kendall p 0.020, growth 3.0 against 4): soak longer) (at 2.0 sessions a second)"
        );
        assert_eq!(rule(&a), "per resource, on the load phase after the warm-up: 12 equal-time blocks, each block's minimum; leak when Mann–Kendall on the block minima gives p < 0.01, Sen's slope > 0, the OLS slope of the block minima has a 95 % interval above zero and the growth over the load phase reaches the floor (RSS and cgroup memory: 2 MB + 1 % of the start; threads 2; open files 4); no leak when p ≥ 0.05 or the OLS interval's upper end stays under that floor; else unknown");
        assert!(headline(&SoakAnalysis::default()).starts_with("nothing to judge"));
    }

    #[test]
    fn a_soak_recorded_in_words_keeps_them() {
        let old = r#"{"kind":"soak","headline":"no leak in RSS (then)","rule":"the rule then",
            "sessions_per_s":1.0,"warmup_s":5.0,"leaks":[{"resource":"RSS","verdict":"no leak",
            "why":"as said then","samples":30,"sen_per_hour":null,"sen_per_1000_sessions":null,
            "ols_per_hour":null,"ols_ci95_per_hour":null,"mann_kendall_p":null,"start":null,
            "end_of_load":null,"end_of_drain":null,"drain_return":null}]}"#;
        let a: SoakAnalysis = serde_json::from_str(old).unwrap();
        assert_eq!(a.leaks[0].verdict, LeakVerdict::NoLeak);
        assert_eq!(
            (headline(&a), rule(&a), why(&a.leaks[0])),
            (
                "no leak in RSS (then)".into(),
                "the rule then".into(),
                "as said then".into()
            )
        );
    }
}
