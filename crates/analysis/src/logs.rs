//! What the SUT's own log says across a ladder: each kind of warning or error line, the
//! lowest level where it appeared and how often there, so a message that only comes
//! under load ("10 × `heartbeat failed` at 80 sessions, none below") stands apart from
//! the noise every level prints. The report words them.

use result::StepResult;

pub use result::ladder::LogFinding;

/// The kinds of warning and error the SUT logged, those that came only under load
/// first (by the level where they began), then those present from the lowest level.
pub fn findings(steps: &[StepResult]) -> Vec<LogFinding> {
    let mut sorted: Vec<&StepResult> = steps.iter().filter(|s| s.log.is_some()).collect();
    sorted.sort_by_key(|s| s.concurrency);
    let Some(lowest) = sorted.first().map(|s| s.concurrency) else {
        return Vec::new();
    };
    let mut out: Vec<LogFinding> = Vec::new();
    for s in &sorted {
        for k in s.log.iter().flat_map(|l| &l.kinds) {
            match out
                .iter_mut()
                .find(|f| f.level == k.level && f.message == k.message)
            {
                Some(f) => f.levels.push((s.concurrency, k.count)),
                None => out.push(LogFinding {
                    level: k.level.clone(),
                    message: k.message.clone(),
                    example: k.example.clone(),
                    first_at: s.concurrency,
                    count_at_first: k.count,
                    at_lowest: s.concurrency == lowest,
                    below_cut: sorted.iter().any(|b| {
                        b.concurrency < s.concurrency
                            && b.log
                                .as_ref()
                                .is_some_and(|l| l.kinds_seen > l.kinds.len() as u64)
                    }),
                    levels: vec![(s.concurrency, k.count)],
                }),
            }
        }
    }
    out.sort_by_key(|f| (f.at_lowest, f.first_at, f.level != "error"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::{LogKind, SutLog};

    fn step(c: usize, kinds: &[(&'static str, &str, u64)]) -> StepResult {
        let mut s = crate::verdict::tests::step(c, 1.0, 1.0, 0.5);
        s.log = Some(SutLog {
            lines: 100,
            warnings: kinds.iter().filter(|k| k.0 == "warning").map(|k| k.2).sum(),
            errors: kinds.iter().filter(|k| k.0 == "error").map(|k| k.2).sum(),
            kinds: kinds
                .iter()
                .map(|(level, m, n)| LogKind {
                    level: level.to_string(),
                    message: m.to_string(),
                    count: *n,
                    example: format!("{m} (example)"),
                })
                .collect(),
            kinds_seen: kinds.len() as u64,
            ..Default::default()
        });
        s
    }

    #[test]
    fn a_warning_that_starts_under_load_is_named_with_its_level() {
        let steps = vec![
            step(
                32,
                &[
                    ("warning", "deprecated flag", 1),
                    ("warning", "heartbeat failed", 4),
                ],
            ),
            step(8, &[("warning", "deprecated flag", 1)]),
            step(
                16,
                &[
                    ("warning", "deprecated flag", 1),
                    ("warning", "heartbeat failed", 10),
                ],
            ),
        ];
        let f = findings(&steps);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (
                f[0].message.as_str(),
                f[0].first_at,
                f[0].count_at_first,
                f[0].at_lowest
            ),
            ("heartbeat failed", 16, 10, false)
        );
        assert_eq!(f[0].levels, vec![(16, 10), (32, 4)]);
        assert!(f[1].at_lowest && f[1].message == "deprecated flag");
        assert!(findings(&[]).is_empty());
    }
}
