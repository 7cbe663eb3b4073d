//! The call's heavy work off its clock: speaking a caller's words and reading the words
//! of a bot's reply run on the voice's pool at the lowest priority (19), a thread for
//! each core the harness may use (one reader for a thousand calls on sixteen cores was
//! a queue), one job at a time each. A call's frames go out on the async threads every 20 ms; were fifty
//! replies read at once beside them, the frames would wait for a core — the harness's
//! lag, blamed on nobody.

/// A job's result, when it is done (closed unanswered if the pool is gone).
pub(crate) type Receiver<T> = tokio::sync::oneshot::Receiver<T>;

pub(crate) struct Background(voice::pool::Pool);

impl Background {
    pub fn start() -> Background {
        Background(voice::pool::Pool::new(
            &format!("{}-caller", super::THREAD_NAME),
            voice::pool::cores(),
            19,
        ))
    }

    /// Queues `f`; its result comes on the receiver.
    pub fn submit<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Receiver<T> {
        let (done, result) = tokio::sync::oneshot::channel();
        self.0.submit(move || {
            let _ = done.send(f());
        });
        result
    }
}
