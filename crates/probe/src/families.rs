//! Threads grouped by name: a pool's threads share a name but for a number
//! (`pool-1-thread-1` … `-4` are `pool-1-thread-*`, `GC Thread#0` … are `GC Thread#*`),
//! and a runtime's workers share one outright (`tokio-runtime-w` × 8). The census counts
//! every thread of the SUT's tree, the idle ones too — a pool of workers that each wait
//! on a call uses no CPU, yet its size is the limit on turns in flight.

use std::collections::HashMap;

/// Families kept per interval, the largest first.
pub const KEEP: usize = 8;

/// One family of threads over an interval.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Family {
    /// The name with its trailing number as `*`: `pool-1-thread-*`.
    pub name: String,
    pub threads: u32,
    /// Their CPU over the interval, together, as a share of one core.
    pub share: f64,
}

/// The family a thread's name belongs to: its trailing digits as `*`.
pub fn family_of(name: &str) -> String {
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    match stem.len() == name.len() {
        true => name.to_string(),
        false => format!("{stem}*"),
    }
}

/// The families of these threads (name, CPU share), two threads or more, largest first.
pub fn census<'a>(threads: impl Iterator<Item = (&'a str, f64)>) -> Vec<Family> {
    let mut by: HashMap<String, Family> = HashMap::new();
    for (name, share) in threads {
        let f = family_of(name);
        let e = by.entry(f.clone()).or_insert_with(|| Family {
            name: f,
            ..Family::default()
        });
        e.threads += 1;
        e.share += share;
    }
    let mut out: Vec<Family> = by.into_values().filter(|f| f.threads >= 2).collect();
    out.sort_by(|a, b| b.threads.cmp(&a.threads).then(a.name.cmp(&b.name)));
    out.truncate(KEEP);
    out
}

/// Each family over the intervals that overlap `[a, b]`: the most threads it had in one
/// of them, and its CPU weighted by the overlap; largest first.
pub fn over(intervals: &[&[Family]], spans: &[(f64, f64)], a: f64, b: f64) -> Vec<Family> {
    let span = b - a;
    let mut by: HashMap<String, Family> = HashMap::new();
    for (fams, (from, to)) in intervals.iter().zip(spans) {
        let overlap = to.min(b) - from.max(a);
        if overlap <= 0.0 || span <= 0.0 {
            continue;
        }
        for f in fams.iter() {
            let e = by.entry(f.name.clone()).or_insert_with(|| Family {
                name: f.name.clone(),
                ..Family::default()
            });
            e.threads = e.threads.max(f.threads);
            e.share += f.share * overlap / span;
        }
    }
    let mut out: Vec<Family> = by.into_values().collect();
    out.sort_by(|a, b| b.threads.cmp(&a.threads).then(a.name.cmp(&b.name)));
    out.truncate(KEEP);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jvm_pool_is_one_family_and_lone_threads_are_none() {
        assert_eq!(family_of("pool-1-thread-3"), "pool-1-thread-*");
        assert_eq!(family_of("GC Thread#0"), "GC Thread#*");
        assert_eq!(family_of("tokio-runtime-w"), "tokio-runtime-w");
        let names = [
            "java",
            "pool-1-thread-1",
            "pool-1-thread-2",
            "pool-1-thread-3",
            "pool-1-thread-4",
            "HttpClient-1-Se",
            "C2 CompilerThre",
            "GC Thread#0",
            "GC Thread#1",
        ];
        let f = census(names.iter().map(|n| (*n, 0.01)));
        assert_eq!(f[0].name, "pool-1-thread-*");
        assert_eq!(f[0].threads, 4);
        assert!((f[0].share - 0.04).abs() < 1e-9);
        assert_eq!(f[1].name, "GC Thread#*");
        assert_eq!(f.len(), 2, "a thread alone is no family: {f:?}");
        // Over two intervals: the most threads seen, CPU weighted by time.
        let a = vec![Family {
            name: "p-*".into(),
            threads: 2,
            share: 0.2,
        }];
        let b = vec![Family {
            name: "p-*".into(),
            threads: 4,
            share: 0.4,
        }];
        let o = over(&[&a, &b], &[(0.0, 1.0), (1.0, 2.0)], 0.0, 2.0);
        assert_eq!(o[0].threads, 4);
        assert!((o[0].share - 0.3).abs() < 1e-9);
    }
}
