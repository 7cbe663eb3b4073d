//! The HTTP server: how the mock starts (its state built from the options), accepts
//! connections on hyper's HTTP/1 directly, closes the ones an injected failure drops, and
//! stops. What each route does is `routes.rs`'s.

use crate::ledger::Ledger;
use crate::provider::scenario::Scenario;
use crate::serve::app::App;
use crate::serve::errors::Abort;
use crate::serve::routes::router;
use crate::serve::stats::Stats;
use axum::response::Response;
use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::sync::RwLock;
use std::time::Instant;
use tokio::net::TcpListener;

/// How to start the mock.
#[derive(Clone, Debug)]
pub struct MockOptions {
    pub listen: SocketAddr,
    pub scenario: Scenario,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    pub max_body_bytes: usize,
    pub fixed_created: Option<u64>,
    /// Answer the sessions of this replay as they were recorded (its choreography
    /// replaces the scenario's scripts).
    pub replay: Option<Arc<workload::Replay>>,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            scenario: Scenario::default(),
            seed: None,
            max_body_bytes: 32 << 20,
            fixed_created: None,
            replay: None,
        }
    }
}

/// Accepts connections until `stopped` fires, then waits for open ones to finish.
///
/// hyper's HTTP/1 server is used directly (not axum::serve) so the mock skips
/// protocol sniffing and keeps per-connection buffers at their minimum: thousands
/// of open streams must cost little memory.
async fn accept_loop(
    listener: TcpListener,
    service: Aborting,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    // Graceful shutdown by hand: hyper-util's watcher does not take connections that
    // can upgrade (the Realtime API's WebSocket).
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (alive_tx, mut alive_rx) = tokio::sync::mpsc::channel::<()>(1);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.max_buf_size(64 * 1024).keep_alive(true);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors or a reset before accept: keep serving.
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    continue;
                }
            },
            _ = &mut stopped => break,
        };
        // Nagle's algorithm would hold small SSE frames back by up to 40 ms.
        let _ = tcp.set_nodelay(true);
        let conn = http
            .serve_connection(TokioIo::new(tcp), service.accepted_now())
            .with_upgrades();
        let (mut stop, alive) = (stop_rx.clone(), alive_tx.clone());
        tokio::spawn(async move {
            let _alive = alive;
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(alive_tx);
    let _ = alive_rx.recv().await;
    Ok(())
}

/// The router as a hyper service that turns a response marked [`Abort`] into a
/// closed connection: hyper drops a connection whose service returns an error.
/// It also times each connection's wait from accept to its first request (into the
/// mock's stats): one service a connection, `accepted` set when it was accepted.
#[derive(Clone)]
struct Aborting {
    router: TowerToHyperService<Router>,
    app: Arc<App>,
    accepted: Option<(Instant, Arc<AtomicBool>)>,
}

impl Aborting {
    fn new(app: Arc<App>) -> Aborting {
        Aborting {
            router: TowerToHyperService::new(router(app.clone())),
            app,
            accepted: None,
        }
    }

    /// The service for a connection accepted now.
    fn accepted_now(&self) -> Aborting {
        Aborting {
            accepted: Some((Instant::now(), Arc::new(AtomicBool::new(true)))),
            ..self.clone()
        }
    }
}

#[derive(Debug)]
struct Aborted;

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped (injected by plimsoll)")
    }
}

impl std::error::Error for Aborted {}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Aborting {
    type Response = Response;
    type Error = Aborted;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response, Aborted>> + Send>>;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        if let Some((at, first)) = &self.accepted {
            if first.swap(false, Relaxed) {
                self.app.stats.record_accept_wait(at.elapsed());
            }
        }
        let fut = self.router.call(req);
        Box::pin(async move {
            let resp = fut.await.unwrap_or_else(|never| match never {});
            if resp.extensions().get::<Abort>().is_some() {
                Err(Aborted)
            } else {
                Ok(resp)
            }
        })
    }
}

/// The name of the mock's threads when it runs apart ([`MockServer::start_apart`]): what
/// a step counts as the mock's CPU. Its voice pool's threads begin with it too.
pub const THREAD_NAME: &str = "plimsoll-mock";

/// A running mock. Dropping it does not stop it; call [`MockServer::shutdown`].
pub struct MockServer {
    pub addr: SocketAddr,
    pub app: Arc<App>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The mock's own runtime when it runs apart from its caller's.
    runtime: Apart,
}

/// A runtime of the mock's own, shut down without waiting when dropped: it is dropped
/// inside its caller's runtime (a step that ends, or fails before it started), where a
/// blocking drop would panic.
#[derive(Default)]
struct Apart(Option<tokio::runtime::Runtime>);

impl Drop for Apart {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

impl MockServer {
    /// Binds and starts serving on the current tokio runtime.
    pub async fn start(opts: MockOptions) -> std::io::Result<MockServer> {
        let listener = TcpListener::bind(opts.listen).await?;
        let addr = listener.local_addr()?;
        let seed = opts.seed.unwrap_or(opts.scenario.seed);
        let pushback = crate::pushback::state::Pushback::new(opts.scenario.sets_limits());
        let mut scenario = opts.scenario;
        if opts.replay.is_some() {
            // The recording says which tools are called; a script's expectations (the
            // oracle's echo check) would judge the replayed calls by another choreography.
            for spec in std::iter::once(&mut scenario.defaults).chain(scenario.models.values_mut())
            {
                spec.script = Arc::new(Vec::new());
            }
        }
        let prompt_cache = crate::cache::store::Store::new(scenario.cache.capacity);
        let app = Arc::new(App {
            prompt_cache,
            epoch: tokio::time::Instant::now(),
            replay: opts.replay.map(crate::provider::replay::Replaying::new),
            mcp: crate::mcp::server::McpServer::new(&scenario.mcp, seed),
            pushback,
            calls_by_model: Default::default(),
            chains: Default::default(),
            rendezvous: Default::default(),
            scenario,
            seed,
            max_body_bytes: opts.max_body_bytes,
            fixed_created: opts.fixed_created,
            stats: Stats::default(),
            refusals: Default::default(),
            ledger: Ledger::new(),
            failure_overrides: RwLock::new(BTreeMap::new()),
            voice_pool: crate::serve::audio::pool(THREAD_NAME),
            said: Default::default(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = Aborting::new(app.clone());
        let task = tokio::spawn(accept_loop(listener, service, stopped));
        Ok(MockServer {
            addr,
            app,
            stop,
            task,
            runtime: Apart::default(),
        })
    }

    /// Starts the mock on a runtime of its own, `workers` threads named
    /// [`THREAD_NAME`]: its CPU can then be told apart from its caller's (a step's
    /// driver), and a busy driver does not hold its frames back in one queue.
    pub async fn start_apart(opts: MockOptions, workers: usize) -> std::io::Result<MockServer> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .thread_name(THREAD_NAME)
            .enable_all()
            .build()?;
        let started = rt.spawn(MockServer::start(opts));
        // Held as Apart from here on: a failed start drops it without blocking.
        let rt = Apart(Some(rt));
        let mut server = started.await.map_err(std::io::Error::other)??;
        server.runtime = rt;
        Ok(server)
    }

    /// `http://ADDR` — the Anthropic base URL; OpenAI's is this plus `/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets open responses finish, and waits.
    pub async fn shutdown(self) -> std::io::Result<()> {
        let _ = self.stop.send(());
        self.task.await.unwrap_or(Ok(()))
    }

    /// Waits until the server task ends (it ends only on error or shutdown).
    pub async fn wait(self) -> std::io::Result<()> {
        let MockServer { stop, task, .. } = self;
        let result = task.await.unwrap_or(Ok(()));
        drop(stop);
        result
    }
}
