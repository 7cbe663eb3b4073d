//! Live progress of a step on a terminal: sessions done of all, failures, turns, the
//! SUT's memory and threads, elapsed time (indicatif). Nothing at all when stderr is not a
//! terminal, or with `--json`.

use drive::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use probe::Sampler;
use std::io::IsTerminal;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct Live {
    bar: ProgressBar,
    task: tokio::task::JoinHandle<()>,
}

/// Starts the line when `wanted` and stderr is a terminal.
pub(crate) fn start(
    wanted: bool,
    sessions: usize,
    p: Arc<Progress>,
    s: Arc<Sampler>,
) -> Option<Live> {
    if !wanted || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(sessions as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "  {spinner} {elapsed:>4} {bar:24} {pos}/{len} sessions done {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    let b = bar.clone();
    let task = tokio::spawn(async move {
        loop {
            let (rss_kb, threads) = s.latest();
            let failed = p.sessions_failed.load(Relaxed);
            b.set_position(p.sessions_ok.load(Relaxed) + failed);
            b.set_message(format!(
                "({failed} failed) · {} · SUT {:.1} MB, {}",
                result::words::count(p.turns.load(Relaxed), "turn"),
                rss_kb as f64 / 1024.0,
                result::words::count(threads, "thread")
            ));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    Some(Live { bar, task })
}

impl Live {
    /// Stops and clears the line, so what is printed next starts on a clean one; its task
    /// is awaited, so its hold on the sampler is gone.
    pub(crate) async fn finish(self) {
        self.task.abort();
        let _ = self.task.await;
        self.bar.finish_and_clear();
    }
}
