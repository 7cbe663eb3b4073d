//! Audio sent paced: each frame leaves at its deadline (those already due when the task
//! wakes go out in one write), its lateness recorded with the mock's audio timing — the
//! same discipline as a chat stream's tokens, so a run can prove the mock's audio was not
//! late.

use crate::serve::app::App;
use axum::body::{Body, Bytes};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Frames to send and when, from `start`.
pub(crate) struct Paced {
    pub app: Arc<App>,
    pub start: Instant,
    pub frames: Vec<(Duration, Bytes)>,
}

/// Counts an open audio stream for as long as its body lives.
struct Open(Arc<App>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.stats.streams_open.fetch_sub(1, Relaxed);
    }
}

struct State {
    p: Paced,
    next: usize,
    _open: Open,
}

impl State {
    async fn next_write(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        let n = self.p.frames.len();
        if self.next >= n {
            return None;
        }
        let deadline = self.p.start + self.p.frames[self.next].0;
        tokio::time::sleep_until(deadline).await;
        let now = Instant::now();
        let first = self.next;
        while self.next < n && self.p.start + self.p.frames[self.next].0 <= now {
            let due = self.p.start + self.p.frames[self.next].0;
            self.p.app.stats.record_audio_late(now - due);
            self.next += 1;
        }
        // One frame due (the usual case) goes out as it is, without a copy.
        Some(Ok(match &self.p.frames[first..self.next] {
            [(_, one)] => one.clone(),
            due => {
                let mut all = Vec::with_capacity(due.iter().map(|(_, b)| b.len()).sum());
                for (_, b) in due {
                    all.extend_from_slice(b);
                }
                Bytes::from(all)
            }
        }))
    }
}

/// The frames as a response body that sends each at its deadline.
pub(crate) fn body(p: Paced) -> Body {
    p.app.stats.streams_total.fetch_add(1, Relaxed);
    p.app.stats.streams_open.fetch_add(1, Relaxed);
    let open = Open(p.app.clone());
    let state = State {
        p,
        next: 0,
        _open: open,
    };
    Body::from_stream(futures_util::stream::unfold(state, |mut st| async move {
        let w = st.next_write().await?;
        Some((w, st))
    }))
}

/// Deadlines for `n` chunks of `chunk_ms` of audio each: the first at `first_ms`, the
/// rest `speed` times faster than they play.
pub(crate) fn deadlines(n: usize, first_ms: f64, chunk_ms: f64, speed: f64) -> Vec<Duration> {
    (0..n)
        .map(|i| Duration::from_secs_f64((first_ms + i as f64 * chunk_ms / speed) / 1000.0))
        .collect()
}
