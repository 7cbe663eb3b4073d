//! The probe's figures as RESULT fields: what the samples of the SUT's process tree, its
//! cgroup, its scratch directory and its log say, written into a [`StepResult`]. A new
//! figure the probe measures is filled in here, beside the code that measures it.

use crate::log::LogBook;
use crate::{Stopped, Summary};
use result::{round2, StepResult};

impl Summary {
    /// Fills the fields that come from the samples alone.
    pub fn fill(&self, r: &mut StepResult) {
        r.peak_rss_mb = round2(self.peak_rss_kb as f64 / 1024.0);
        r.baseline_rss_mb = round2(self.baseline_rss_kb as f64 / 1024.0);
        r.baseline_processes = (self.baseline_processes > 0).then_some(self.baseline_processes);
        r.peak_processes = (self.peak_processes > 0).then_some(self.peak_processes);
        r.peak_threads = self.peak_threads;
        r.peak_fds = self.peak_fds;
        r.cpu_sec = round2(self.cpu_sec);
        r.cgroup_mem_peak_mb = self
            .cgroup
            .as_ref()
            .map(|c| round2(c.peak_kb as f64 / 1024.0));
        r.cgroup_oom_kills = self.cgroup.as_ref().map(|c| c.oom_kills);
        let mb = |kb: Option<u64>| kb.map(|k| round2(k as f64 / 1024.0));
        r.cgroup_anon_peak_mb = self.cgroup.as_ref().and_then(|c| mb(c.anon_kb));
        r.cgroup_file_peak_mb = self.cgroup.as_ref().and_then(|c| mb(c.file_kb));
        r.pss = self.pss.map(|p| result::PssFigures {
            baseline_mb: round2(p.baseline_kb as f64 / 1024.0),
            peak_mb: round2(p.peak_kb as f64 / 1024.0),
            kb_per_session: round2(p.kb_per_session(r.concurrency)),
        });
        r.thread_cpu = self.thread_cpu();
        r.limits = self.limits.clone();
    }

    /// The busiest threads over the window (the whole sampling when none was set).
    fn thread_cpu(&self) -> Option<result::ThreadCpu> {
        let first = self.thread_intervals.first()?;
        let last = self.thread_intervals.last()?;
        let (a, b) = self.window.unwrap_or((first.from_s, last.to_s));
        let shares = crate::threads::shares_over(&self.thread_intervals, a, b);
        let count = |at_least: f64| {
            shares
                .iter()
                .filter(|s| s.share + s.wait >= at_least)
                .count() as u32
        };
        let milli = |x: f64| (x * 1000.0).round() / 1000.0;
        Some(result::ThreadCpu {
            busiest: shares
                .iter()
                .take(3)
                .map(|s| result::BusyThread {
                    name: s.name.clone(),
                    tid: s.tid,
                    core_share: milli(s.share),
                    wait_share: Some(milli(s.wait)),
                    main: s.main,
                })
                .collect(),
            busy: count(0.5),
            saturated: count(0.9),
            active: self
                .thread_intervals
                .iter()
                .filter(|iv| iv.to_s > a && iv.from_s < b)
                .map(|iv| iv.active)
                .max(),
            main_share: Some(milli(
                shares.iter().find(|s| s.main).map_or(0.0, |s| s.share),
            )),
            groups: crate::families::over(
                &self
                    .thread_intervals
                    .iter()
                    .map(|iv| iv.families.as_slice())
                    .collect::<Vec<_>>(),
                &self
                    .thread_intervals
                    .iter()
                    .map(|iv| (iv.from_s, iv.to_s))
                    .collect::<Vec<_>>(),
                a,
                b,
            )
            .into_iter()
            .map(|f| result::ThreadGroup {
                name: f.name,
                threads: f.threads,
                core_share: milli(f.share),
            })
            .collect(),
        })
    }

    /// RSS the sessions added at the peak, each: (peak − baseline) / `sessions`.
    pub fn kb_per_session(&self, sessions: usize) -> f64 {
        self.peak_rss_kb.saturating_sub(self.baseline_rss_kb) as f64 / sessions.max(1) as f64
    }
}

impl Stopped {
    /// Fills the fields that come from the SUT's end: what it left in its scratch
    /// directory, the room its filesystem had, what it logged.
    pub fn fill(&self, r: &mut StepResult) {
        r.files_created = self.files_created;
        r.log = Some(sut_log(&self.log));
        r.scratch = Some(result::Scratch {
            peak_mb: round2(self.disk.peak_bytes as f64 / 1048576.0),
            peak_files: self.disk.peak_files,
            fs_free_min_mb: self
                .disk
                .free_min_bytes
                .map(|b| round2(b as f64 / 1048576.0)),
            fs_free_min_inodes: self.disk.free_min_inodes,
        });
    }
}

/// The SUT's log as RESULT carries it: counts, and the most frequent kinds.
fn sut_log(book: &LogBook) -> result::SutLog {
    let mut kinds: Vec<result::LogKind> = book
        .kinds
        .iter()
        .map(|((level, message), k)| result::LogKind {
            level: level.word().to_string(),
            message: message.clone(),
            count: k.count,
            example: k.example.clone(),
        })
        .collect();
    let kinds_seen = kinds.len() as u64 + book.kinds_dropped;
    kinds.sort_by(|a, b| b.count.cmp(&a.count).then(a.message.cmp(&b.message)));
    kinds.truncate(result::LOG_KINDS);
    result::SutLog {
        lines: book.lines,
        warnings: book.warnings,
        errors: book.errors,
        kinds,
        kinds_seen,
        while_stopping: (book.while_stopping > 0).then_some(book.while_stopping),
        worker: book.worker.log.said().then(|| book.worker.log.clone()),
    }
}
