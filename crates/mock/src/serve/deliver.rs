//! Sending one decided reply: whole after its nominal generation time, or as an SSE
//! stream whose frames leave at their deadlines (frames already due when the task wakes
//! go out in one write; an injected cut drops the connection before its frame).
//!
//! Lateness against the deadlines is recorded for every frame; the generation slots are
//! held until the reply's body is gone.

use crate::provider::timing::Schedule;
use crate::pushback::quota::Reading;
use crate::pushback::state::Held;
use crate::serve::app::App;
use crate::serve::headers::{add_request_id, put_headers};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use wire::{Api, StreamRenderer};

/// Everything needed to send one decided reply.
pub struct Plan {
    pub app: Arc<App>,
    pub api: Api,
    pub request_id: String,
    pub renderer: StreamRenderer,
    pub schedule: Schedule,
    pub rng: ChaCha8Rng,
    pub start: Instant,
    pub session: String,
    /// The quotas' state after this request, for the rate-limit headers.
    pub readings: Vec<Reading>,
    /// Generation slots, held until the reply is sent.
    pub held: Held,
}

pub async fn whole(mut p: Plan) -> Response {
    let mut due = Duration::ZERO;
    for c in p.renderer.chunks() {
        due = p.schedule.next(c.tokens as u32, c.thinking, &mut p.rng);
    }
    let deadline = p.start + due;
    tokio::time::sleep_until(deadline).await;
    let late = Instant::now().saturating_duration_since(deadline);
    p.app.stats.record_late(late);
    p.app.ledger.late(&p.session, late.as_secs_f64() * 1000.0);
    let mut resp = Response::new(Body::from(wire::render_json(p.api, p.renderer.reply())));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_request_id(h, p.api, &p.request_id);
    put_headers(h, p.api, &p.readings);
    drop(p.held);
    resp
}

/// Counts an open stream for as long as its body lives, and reports its worst
/// lateness to the ledger when it ends.
struct OpenStream {
    app: Arc<App>,
    session: String,
    late_max_ms: f64,
    /// Generation slots: free once the stream's body is gone.
    _held: Held,
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.app.stats.streams_open.fetch_sub(1, Relaxed);
        self.app.ledger.late(&self.session, self.late_max_ms);
    }
}

struct StreamState {
    renderer: StreamRenderer,
    schedule: Schedule,
    rng: ChaCha8Rng,
    start: Instant,
    next: usize,
    /// The deadline of chunk `next`, when already drawn.
    next_due: Option<Duration>,
    /// An injected cut: the connection drops before this frame.
    cut_at: Option<usize>,
    open: OpenStream,
}

impl StreamState {
    fn due_of_next(&mut self) -> Duration {
        match self.next_due.take() {
            Some(d) => d,
            None => {
                let c = self.renderer.chunks()[self.next];
                self.schedule
                    .next(c.tokens as u32, c.thinking, &mut self.rng)
            }
        }
    }

    fn late(&mut self, late: Duration) {
        self.open.app.stats.record_late(late);
        self.open.late_max_ms = self.open.late_max_ms.max(late.as_secs_f64() * 1000.0);
    }

    /// The next write: the frames due by now, or the injected cut; `None` once the
    /// stream has ended.
    async fn next_write(&mut self) -> Option<std::io::Result<Bytes>> {
        loop {
            let n = self.renderer.chunks().len();
            if self.next >= n {
                return None;
            }
            let deadline = self.start + self.due_of_next();
            tokio::time::sleep_until(deadline).await;
            if self.cut_at == Some(self.next) {
                // Pending once, so hyper writes out the frames already given to it before
                // the error drops the connection: the frames before a cut all arrive (a
                // scripted cut after K tokens delivers K, not sometimes K − 1). Then the
                // stream ends.
                tokio::task::yield_now().await;
                self.next = n;
                let cut = std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "stream cut (injected by plimsoll)",
                );
                return Some(Err(cut));
            }
            let now = Instant::now();
            // Room for a typical frame and its SSE framing without regrowing.
            let mut out = Vec::with_capacity(1024);
            self.late(now.saturating_duration_since(deadline));
            self.renderer.frame(self.next, &mut out);
            self.next += 1;
            // Frames already due (the task woke late) go out in the same write.
            while self.next < n && self.cut_at != Some(self.next) {
                let due = self.due_of_next();
                if self.start + due > now {
                    self.next_due = Some(due);
                    break;
                }
                self.late(now - (self.start + due));
                self.renderer.frame(self.next, &mut out);
                self.next += 1;
            }
            // A frame with nothing to send (the end of hidden reasoning in Chat
            // Completions, a Gemini function call's partial arguments): no write.
            if !out.is_empty() {
                return Some(Ok(Bytes::from(out)));
            }
        }
    }
}

pub fn stream(p: Plan, cut_at: Option<usize>) -> Response {
    p.app.stats.streams_total.fetch_add(1, Relaxed);
    p.app.stats.streams_open.fetch_add(1, Relaxed);
    let state = StreamState {
        renderer: p.renderer,
        schedule: p.schedule,
        rng: p.rng,
        start: p.start,
        next: 0,
        next_due: None,
        cut_at,
        open: OpenStream {
            app: p.app,
            session: p.session,
            late_max_ms: 0.0,
            _held: p.held,
        },
    };
    let frames = futures_util::stream::unfold(state, |mut st| async move {
        let write = st.next_write().await?;
        Some((write, st))
    });
    let mut resp = Response::new(Body::from_stream(frames));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    add_request_id(h, p.api, &p.request_id);
    put_headers(h, p.api, &p.readings);
    resp
}
