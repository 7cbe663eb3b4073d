//! Where the voice's heavy work runs off the clock: a few threads of their own, at a
//! lowered priority, one job at a time each. Speaking and hearing take milliseconds of
//! CPU a second of audio; on the threads that send audio frames every 20 ms they would
//! make those frames late. At a lowered priority the scheduler lets frame senders run
//! first whenever both want a core. The threads end when the pool is dropped.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

/// The cores this process may run on: its CPU affinity and its cgroup's CPU quota, as the
/// standard library reads them from inside those limits — never the machine's count.
/// Every pool Plimsoll sizes by cores (the mock's workers and voice, the driver's callers,
/// a step's count of its own cores) asks this, from the thread whose limits apply.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub struct Pool {
    tx: Mutex<Option<mpsc::Sender<Job>>>,
}

impl Pool {
    /// `threads` threads at `nice` (0 normal, 19 lowest; raised only, never lowered).
    pub fn new(name: &str, threads: usize, nice: i32) -> Pool {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut any = false;
        for i in 0..threads.max(1) {
            let rx = rx.clone();
            let started = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || {
                    // SAFETY: setpriority on this thread (who 0) has no preconditions.
                    unsafe {
                        libc::setpriority(libc::PRIO_PROCESS, 0, nice);
                    }
                    loop {
                        let job = match rx.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => break,
                        };
                        match job {
                            // A job that panics loses its own result, not the thread.
                            Ok(job) => {
                                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                            }
                            Err(_) => break,
                        }
                    }
                });
            any |= started.is_ok();
        }
        Pool {
            tx: Mutex::new(any.then_some(tx)),
        }
    }

    /// Queues `job`; false when the pool's threads are gone (the job is dropped).
    pub fn submit(&self, job: impl FnOnce() + Send + 'static) -> bool {
        match self.tx.lock() {
            Ok(tx) => tx.as_ref().is_some_and(|tx| tx.send(Box::new(job)).is_ok()),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_process_has_the_cores_it_was_given() {
        // On a thread pinned to one core, one core; the machine's count is not asked.
        let got = std::thread::spawn(|| {
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            unsafe { libc::CPU_SET(0, &mut set) };
            let pinned =
                unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
            (pinned == 0).then(cores)
        })
        .join()
        .unwrap();
        assert_eq!(got.unwrap_or(1), 1);
    }

    #[test]
    fn jobs_run_and_answer() {
        let pool = Pool::new("t", 2, 10);
        let (tx, rx) = mpsc::channel();
        for i in 0..8 {
            let tx = tx.clone();
            assert!(pool.submit(move || tx.send(i * i).unwrap()));
        }
        let mut got: Vec<i32> = (0..8).map(|_| rx.recv().unwrap()).collect();
        got.sort();
        assert_eq!(got, [0, 1, 4, 9, 16, 25, 36, 49]);
    }

    #[test]
    fn a_job_that_panics_leaves_the_thread_for_the_next() {
        let pool = Pool::new("t", 1, 10);
        assert!(pool.submit(|| panic!("a job's own bug")));
        let (tx, rx) = mpsc::channel();
        assert!(pool.submit(move || tx.send(7).unwrap()));
        assert_eq!(rx.recv_timeout(std::time::Duration::from_secs(10)), Ok(7));
    }
}
