//! Where a bench bot runs: a thread of its own, held to one core, with a current-thread
//! runtime and a listener on loopback, so that its CPU is its thread's and it takes none
//! of the harness's cores.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

/// A started bot: its address and its thread's id (for its CPU).
pub(crate) struct BotThread {
    pub addr: SocketAddr,
    pub tid: i32,
}

/// Starts a bot on `core` under the thread name `name`: `prepare` readies what it says
/// (an error there refuses the start), then the serving it returns takes the listener.
/// Waits for the bot's address.
pub(crate) fn start<P, S, F>(name: &str, core: usize, prepare: P) -> anyhow::Result<BotThread>
where
    P: FnOnce() -> anyhow::Result<S> + Send + 'static,
    S: FnOnce(TcpListener) -> F,
    F: Future<Output = ()>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = probe::affinity::pin_current(&[core]);
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            let started = (|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let serve = prepare()?;
                let listener = rt.block_on(TcpListener::bind("127.0.0.1:0"))?;
                let addr = listener.local_addr()?;
                anyhow::Ok((rt, serve, listener, addr))
            })();
            match started {
                Ok((rt, serve, listener, addr)) => {
                    let _ = tx.send(Ok(BotThread { addr, tid }));
                    rt.block_on(serve(listener));
                }
                Err(e) => drop(tx.send(Err(e))),
            }
        })?;
    rx.recv_timeout(Duration::from_secs(10))?
}
