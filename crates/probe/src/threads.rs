//! The CPU of each of the SUT's threads: at most every full sample, every thread's
//! `/proc/PID/task/TID/schedstat` (time on a CPU and time waiting in a run queue, in ns)
//! is read and compared with the read before, and the busiest threads of that interval
//! kept with their names
//! (`comm`). The reads pace themselves to a share of one core ([`COST_SHARE`]): at 1,000
//! threads a read takes a few milliseconds, at 10,000 tens, so they come less often as
//! threads multiply. A thread pinned at 100 % of a core — an event loop, a lock, an
//! interpreter's global lock — is the commonest wall a process-wide CPU share hides. On a
//! busy machine such a thread gets less than a core yet is runnable all the time: its
//! wait for a CPU is kept beside its time on one, so it still reads as full.

use std::collections::HashMap;
use std::time::Instant;

/// Reading threads takes at most this share of one core.
pub const COST_SHARE: f64 = 0.01;
/// The busiest threads kept per interval.
pub const KEEP: usize = 32;

/// One interval between two reads: its span (seconds since the sampler started) and its
/// busiest threads with their share of one core.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Interval {
    pub from_s: f64,
    pub to_s: f64,
    pub busiest: Vec<ThreadShare>,
    /// Threads that ran [`ACTIVE`] of a core or more over it (all of them, not only the
    /// busiest kept): the workers that served turns, however many.
    #[serde(default)]
    pub active: u32,
    /// Every thread of the tree grouped by name (`pool-1-thread-*` × 4), idle ones too.
    #[serde(default)]
    pub families: Vec<crate::families::Family>,
}

/// A thread that ran this share of a core or more did some of the work (a worker that
/// served a turn: parsing a reply alone costs more); below it, a thread that only waited
/// (a resolver, a timer).
pub const ACTIVE: f64 = 0.0005;

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ThreadShare {
    pub tid: u32,
    pub name: String,
    /// Its CPU over the interval as a share of one core (1.0: a core, all the time).
    pub share: f64,
    /// The share of the interval it waited in a run queue, ready to run.
    pub wait: f64,
    /// A process's main thread (its tid is the process's pid).
    pub main: bool,
}

/// One thread's times so far (schedstat's first two fields), in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Times {
    pub run: u64,
    pub wait: u64,
}

/// The reads so far: each thread's CPU time at the last read, the intervals.
#[derive(Debug, Default)]
pub struct ThreadWatch {
    last: HashMap<u32, Times>,
    last_at: Option<f64>,
    names: HashMap<u32, String>,
    next_due: Option<Instant>,
}

/// Every thread of these processes: (tid, its times). What one read costs is what
/// `plimsoll bench probe` times.
pub fn read_all(pids: &[u32]) -> HashMap<u32, Times> {
    let mut out = HashMap::new();
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let text = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok());
            if let (Some(Some(run)), wait) = (f.next(), f.next().flatten()) {
                let wait = wait.unwrap_or(0);
                out.insert(tid, Times { run, wait });
            }
        }
    }
    out
}

fn name_of(tid: u32) -> String {
    let text = std::fs::read_to_string(format!("/proc/{tid}/comm")).unwrap_or_default();
    let name = text.trim();
    if name.is_empty() {
        format!("thread {tid}")
    } else {
        name.to_string()
    }
}

impl ThreadWatch {
    /// Reads the threads now (`t`: seconds since the sampler started) when its pace
    /// allows; the interval since the read before, when there was one.
    pub fn read(&mut self, pids: &[u32], t: f64) -> Option<Interval> {
        let now = Instant::now();
        if self.next_due.is_some_and(|due| now < due) {
            return None;
        }
        let current = read_all(pids);
        let interval = self
            .last_at
            .filter(|f| t > *f)
            .map(|from_s| self.interval(&current, pids, from_s, t, (t - from_s) * 1e9));
        self.last = current;
        self.last_at = Some(t);
        self.next_due = Some(now + now.elapsed().mul_f64(1.0 / COST_SHARE));
        interval
    }

    /// The interval since the last read; a thread whose tid is one of `pids` is its
    /// process's main thread.
    fn interval(
        &mut self,
        now: &HashMap<u32, Times>,
        pids: &[u32],
        from_s: f64,
        to_s: f64,
        span_ns: f64,
    ) -> Interval {
        let mut shares: Vec<(u32, f64, f64)> = now
            .iter()
            .filter_map(|(tid, t)| {
                let before = self.last.get(tid).copied().unwrap_or_default();
                let used = t.run.saturating_sub(before.run) as f64;
                let waited = t.wait.saturating_sub(before.wait) as f64;
                (used > 0.0).then_some((*tid, used / span_ns, waited / span_ns))
            })
            .collect();
        let active = shares.iter().filter(|s| s.1 >= ACTIVE).count() as u32;
        let used: HashMap<u32, f64> = shares.iter().map(|s| (s.0, s.1)).collect();
        for tid in now.keys() {
            self.names.entry(*tid).or_insert_with(|| name_of(*tid));
        }
        let families = crate::families::census(now.keys().map(|tid| {
            let name = self.names.get(tid).map_or("", String::as_str);
            (name, used.get(tid).copied().unwrap_or(0.0))
        }));
        shares.sort_by(|a, b| (b.1 + b.2).total_cmp(&(a.1 + a.2)).then(a.0.cmp(&b.0)));
        shares.truncate(KEEP);
        let busiest = shares
            .into_iter()
            .map(|(tid, share, wait)| ThreadShare {
                tid,
                name: self
                    .names
                    .entry(tid)
                    .or_insert_with(|| name_of(tid))
                    .clone(),
                share,
                wait,
                main: pids.contains(&tid),
            })
            .collect();
        Interval {
            from_s,
            to_s,
            busiest,
            active,
            families,
        }
    }
}

/// Intervals kept at most; beyond, neighbours are merged in pairs (a long soak reads
/// threads thousands of times).
pub const MAX_INTERVALS: usize = 2048;

/// Neighbouring intervals as one: each thread's share weighted by time (what
/// [`shares_over`] reads of them), the busiest kept.
fn merge(pair: &[Interval]) -> Interval {
    let (from_s, to_s) = (pair[0].from_s, pair[pair.len() - 1].to_s);
    let mut busiest = shares_over(pair, from_s, to_s);
    busiest.truncate(KEEP);
    Interval {
        from_s,
        to_s,
        busiest,
        active: pair.iter().map(|iv| iv.active).max().unwrap_or(0),
        families: crate::families::over(
            &pair
                .iter()
                .map(|iv| iv.families.as_slice())
                .collect::<Vec<_>>(),
            &pair
                .iter()
                .map(|iv| (iv.from_s, iv.to_s))
                .collect::<Vec<_>>(),
            from_s,
            to_s,
        ),
    }
}

/// Adds an interval, merging neighbours in pairs once there are too many.
pub fn push(intervals: &mut Vec<Interval>, iv: Interval) {
    intervals.push(iv);
    if intervals.len() > MAX_INTERVALS {
        let merged: Vec<Interval> = intervals.chunks(2).map(merge).collect();
        *intervals = merged;
    }
}

/// Each thread's mean shares over `[a, b]`, from the intervals that overlap it (weighted
/// by the overlap), busiest (on a core or waiting for one) first.
pub fn shares_over(intervals: &[Interval], a: f64, b: f64) -> Vec<ThreadShare> {
    let span = b - a;
    if span <= 0.0 {
        return Vec::new();
    }
    let mut sum: HashMap<u32, ThreadShare> = HashMap::new();
    for iv in intervals {
        let overlap = iv.to_s.min(b) - iv.from_s.max(a);
        if overlap <= 0.0 {
            continue;
        }
        for t in &iv.busiest {
            let e = sum.entry(t.tid).or_insert_with(|| ThreadShare {
                tid: t.tid,
                name: t.name.clone(),
                main: t.main,
                ..ThreadShare::default()
            });
            e.share += t.share * overlap / span;
            e.wait += t.wait * overlap / span;
        }
    }
    let mut out: Vec<ThreadShare> = sum.into_values().collect();
    out.sort_by(|x, y| {
        (y.share + y.wait)
            .total_cmp(&(x.share + x.wait))
            .then(x.tid.cmp(&y.tid))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn iv(from_s: f64, to_s: f64, busy: &[(u32, f64)]) -> Interval {
        Interval {
            from_s,
            to_s,
            busiest: busy
                .iter()
                .map(|&(tid, share)| ThreadShare {
                    tid,
                    name: format!("t{tid}"),
                    share,
                    wait: share / 10.0,
                    main: false,
                })
                .collect(),
            active: busy.len() as u32,
            families: Vec::new(),
        }
    }

    #[test]
    fn a_thread_busy_all_along_reads_near_one_core_over_the_window() {
        let ivs = vec![
            iv(0.0, 1.0, &[(1, 0.2)]),
            iv(1.0, 2.0, &[(1, 0.98), (2, 0.1)]),
            iv(2.0, 3.0, &[(1, 0.96), (2, 0.1)]),
            iv(3.0, 4.0, &[(1, 0.1)]),
        ];
        let s = shares_over(&ivs, 1.0, 3.0);
        assert_eq!(s[0].tid, 1);
        assert!((s[0].share - 0.97).abs() < 1e-9, "{s:?}");
        assert!((s[0].wait - 0.097).abs() < 1e-9, "{s:?}");
        assert!((s[1].share - 0.1).abs() < 1e-9);
        // Half of an interval in the window counts half its time.
        let half = shares_over(&ivs, 0.5, 1.5);
        assert!(
            (half[0].share - (0.2 * 0.5 + 0.98 * 0.5)).abs() < 1e-9,
            "{half:?}"
        );
        assert!(shares_over(&ivs, 2.0, 2.0).is_empty());
    }

    #[test]
    fn many_intervals_are_merged_keeping_each_thread_s_time() {
        let mut all = Vec::new();
        for i in 0..(MAX_INTERVALS + 1) {
            let t = i as f64;
            push(
                &mut all,
                iv(t, t + 1.0, &[(7, if i % 2 == 0 { 1.0 } else { 0.0 })]),
            );
        }
        assert!(all.len() <= MAX_INTERVALS / 2 + 1, "{}", all.len());
        let s = shares_over(&all, 0.0, 2048.0);
        assert!((s[0].share - 0.5).abs() < 1e-9, "{s:?}");
        assert!((s[0].wait - 0.05).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn this_process_busy_thread_is_seen_with_its_name() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let h = std::thread::Builder::new()
            .name("plimsoll-spin".into())
            .spawn(move || {
                let mut x = 0u64;
                while !s.load(std::sync::atomic::Ordering::Relaxed) {
                    x = x.wrapping_add(1);
                    std::hint::black_box(x);
                }
            })
            .unwrap();
        let me = std::process::id();
        let mut w = ThreadWatch::default();
        let t0 = Instant::now();
        assert_eq!(
            w.read(&[me], 0.0),
            None,
            "the first read has nothing before it"
        );
        std::thread::sleep(Duration::from_millis(300));
        w.next_due = None;
        let iv = w.read(&[me], t0.elapsed().as_secs_f64()).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        h.join().unwrap();
        let top = &iv.busiest[0];
        assert_eq!(top.name, "plimsoll-spin", "{iv:?}");
        // A spinner gets ~1.0 of a core on a quiet machine and less on a busy one; a share
        // in the wrong unit or of the wrong span is off by 1000× (or 0). 0.05 holds unless
        // 40 threads want each core.
        assert!(top.share > 0.05, "{top:?}");
        assert!(
            !top.main,
            "a thread the process started is not its main thread"
        );
        assert!(iv.active >= 1, "{iv:?}");
    }

    #[test]
    fn a_process_s_own_thread_is_its_main_thread() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let mut w = ThreadWatch::default();
        w.read(&[child.id()], 0.0);
        std::thread::sleep(Duration::from_millis(300));
        w.next_due = None;
        let iv = w.read(&[child.id()], 0.3);
        let _ = child.kill();
        let _ = child.wait();
        let iv = iv.unwrap();
        let top = &iv.busiest[0];
        assert_eq!(top.tid, child.id(), "{iv:?}");
        // As above: ~1.0 quiet, 0.05 a floor no busy machine reaches.
        assert!(top.main && top.share > 0.05, "{top:?}");
        assert_eq!(iv.active, 1, "{iv:?}");
    }
}
