//! Which levels a ramp runs: a fixed list, or `auto` — doubling to find where the system
//! stops holding, then bisecting to find the line within a resolution.

use result::Standing;

#[derive(Clone, Debug, PartialEq)]
pub enum Levels {
    List(Vec<usize>),
    /// Doubling from `start` until a collapse or two levels over budget (at most
    /// `max_steps` doublings), then bisecting between the last level that holds and the
    /// first that does not, until they are within `resolution` of each other.
    Auto {
        start: usize,
        max_steps: usize,
        resolution: f64,
    },
}

/// `"10,20,40"` or `"auto"`.
pub fn parse_levels(s: &str, start: usize) -> Result<Levels, String> {
    if s.trim() == "auto" {
        return Ok(Levels::Auto {
            start: start.max(1),
            max_steps: 14,
            resolution: 0.10,
        });
    }
    let mut v = Vec::new();
    for part in s.split(',') {
        let n: usize = part.trim().parse().map_err(|_| {
            format!("--ladder {s:?}: {part:?} is not a whole number; write e.g. 10,20,40 or auto")
        })?;
        if n == 0 {
            return Err(format!("--ladder {s:?}: levels start at 1"));
        }
        if v.last().is_some_and(|&last| n <= last) {
            return Err(format!("--ladder {s:?}: levels must increase"));
        }
        v.push(n);
    }
    Ok(Levels::List(v))
}

/// `--replicas 1,2,4` → [1, 2, 4]: whole numbers from 1 to 64, increasing.
pub fn parse_replicas(s: &str) -> Result<Vec<usize>, String> {
    let mut v: Vec<usize> = Vec::new();
    for part in s.split(',') {
        let n: usize = part.trim().parse().map_err(|_| {
            format!("--replicas {s:?}: {part:?} is not a whole number; write e.g. 1,2,4")
        })?;
        if !(1..=64).contains(&n) {
            return Err(format!(
                "--replicas {s:?}: each count is from 1 to 64 (got {n})"
            ));
        }
        if v.last().is_some_and(|&last| n <= last) {
            return Err(format!("--replicas {s:?}: counts must increase"));
        }
        v.push(n);
    }
    Ok(v)
}

/// `10%` or `0.1` → 0.1.
pub fn parse_resolution(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("--resolution {s:?}: write a share such as 10%"))?;
    if !(v > 0.0 && v < 1.0) {
        return Err(format!("--resolution {s:?}: must be between 0 % and 100 %"));
    }
    Ok(v)
}

/// Where auto stands, from the standings so far (in the order run).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Search {
    /// The highest level that held below every level that did not.
    pub holds: Option<usize>,
    /// The lowest level that did not hold (over budget or collapsed).
    pub fails: Option<usize>,
    pub over: usize,
    pub collapsed: bool,
    /// (level, turns/s) of the doubling levels, to see whether throughput still grows.
    pub rates: Vec<(usize, f64)>,
}

impl Search {
    pub fn record(&mut self, level: usize, standing: Standing) {
        match standing {
            Standing::Holds if self.fails.is_none_or(|f| level < f) => {
                self.holds = Some(self.holds.map_or(level, |h| h.max(level)))
            }
            Standing::Holds => {}
            other => {
                self.fails = Some(self.fails.map_or(level, |f| f.min(level)));
                if other == Standing::Collapsed {
                    self.collapsed = true;
                } else {
                    self.over += 1;
                }
            }
        }
    }

    /// Notes a doubling level's throughput.
    pub fn rate(&mut self, level: usize, turns_per_s: f64) {
        self.rates.push((level, turns_per_s));
    }

    /// Doubling goes on until a collapse, or two levels over budget once throughput has
    /// stopped growing (the last doubling added under 10 %: the wall is in view), or four
    /// levels over budget whatever throughput does.
    pub fn doubling_done(&self) -> bool {
        let flat = match self.rates.as_slice() {
            [.., (_, a), (_, b)] => *b <= a * 1.10,
            _ => false,
        };
        self.collapsed || (self.over >= 2 && flat) || self.over >= 4
    }

    /// The next level to bisect at, or None when the line is found within `resolution`.
    pub fn next_bisect(&self, resolution: f64) -> Option<usize> {
        let (lo, hi) = (self.holds.unwrap_or(0), self.fails?);
        if hi <= lo + 1 || (lo > 0 && (hi - lo) as f64 / lo as f64 <= resolution) {
            return None;
        }
        Some(if lo == 0 {
            1.max(hi / 2)
        } else {
            (lo + hi) / 2
        })
        .filter(|&m| m != hi && m != lo)
    }
}

/// `"64GB,16cpu"` → (64, 16).
pub fn parse_host(s: &str) -> Result<(f64, f64), String> {
    let (mut gb, mut cpus) = (None, None);
    for part in s.split(',') {
        let p = part.trim().to_ascii_lowercase();
        if let Some(v) = p.strip_suffix("gb").or_else(|| p.strip_suffix('g')) {
            gb = v.trim().parse().ok();
        } else if let Some(v) = p
            .strip_suffix("cpu")
            .or_else(|| p.strip_suffix("cpus"))
            .or_else(|| p.strip_suffix("cores"))
        {
            cpus = v.trim().parse().ok();
        }
    }
    match (gb, cpus) {
        (Some(g), Some(c)) if g > 0.0 && c > 0.0 => Ok((g, c)),
        _ => Err(format!(
            "--host {s:?}: write memory and cores, e.g. 64GB,16cpu"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_counts_read_and_their_mistakes_named() {
        assert_eq!(parse_replicas("1, 2,4"), Ok(vec![1, 2, 4]));
        assert!(parse_replicas("2,1").unwrap_err().contains("must increase"));
        assert!(parse_replicas("0").unwrap_err().contains("from 1 to 64"));
        assert!(parse_replicas("two").unwrap_err().contains("e.g. 1,2,4"));
    }

    #[test]
    fn parses_ladders_and_hosts() {
        assert_eq!(
            parse_levels("10, 20,40", 5).unwrap(),
            Levels::List(vec![10, 20, 40])
        );
        assert_eq!(
            parse_levels("auto", 5).unwrap(),
            Levels::Auto {
                start: 5,
                max_steps: 14,
                resolution: 0.1
            }
        );
        assert!(parse_levels("10,5", 1).unwrap_err().contains("increase"));
        assert!(parse_levels("10,x", 1)
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(parse_host("64GB,16cpu").unwrap(), (64.0, 16.0));
        assert!(parse_host("64GB").is_err());
        assert_eq!(parse_resolution("10%").unwrap(), 0.1);
        assert!(parse_resolution("0").is_err());
    }

    #[test]
    fn auto_doubles_then_bisects_to_the_resolution() {
        // A system that holds up to 23 sessions: doubling 2, 4, 8, 16, 32 (over), 64 (over).
        let holds = |n: usize| {
            if n <= 23 {
                Standing::Holds
            } else {
                Standing::Over
            }
        };
        let mut s = Search::default();
        let mut run = Vec::new();
        let mut level = 2;
        while !s.doubling_done() {
            s.record(level, holds(level));
            // Throughput flat from 32 sessions on.
            s.rate(level, level.min(32) as f64);
            run.push(level);
            level *= 2;
        }
        while let Some(m) = s.next_bisect(0.10) {
            s.record(m, holds(m));
            run.push(m);
        }
        assert_eq!(run, [2, 4, 8, 16, 32, 64, 24, 20, 22]);
        let mut growing = Search::default();
        // Over budget from 8 on while throughput keeps doubling: four levels over end it.
        for (i, level) in [2, 4, 8, 16, 32, 64].into_iter().enumerate() {
            growing.record(
                level,
                if level <= 4 {
                    Standing::Holds
                } else {
                    Standing::Over
                },
            );
            growing.rate(level, level as f64);
            assert_eq!(growing.doubling_done(), i == 5, "four over budget end it");
            if level == 32 {
                assert!(!growing.doubling_done(), "over twice but still scaling");
            }
        }
        // 22 holds and 24 does not: the line is found within 10 %.
        assert_eq!((s.holds, s.fails), (Some(22), Some(24)));
    }

    #[test]
    fn auto_bisects_below_a_first_level_that_already_fails() {
        let mut s = Search::default();
        s.record(8, Standing::Over);
        s.record(16, Standing::Collapsed);
        assert_eq!(s.next_bisect(0.1), Some(4));
        s.record(4, Standing::Holds);
        assert_eq!(s.next_bisect(0.1), Some(6));
    }
}
