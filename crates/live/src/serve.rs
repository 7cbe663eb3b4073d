//! The live view's server: the page (`/`), its parts (`/parts`) and the metrics
//! (`/metrics`), read from the board on each request; on loopback unless the user names
//! another address.

use crate::board::Board;
use axum::extract::State as Shared;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use std::net::SocketAddr;
use std::time::Duration;

/// Where the live view listens when `--live` names no address.
pub const DEFAULT: &str = "127.0.0.1:9466";

/// A live view being served.
pub struct Server {
    pub addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// Reads `--live`'s address: `HOST:PORT`, `:PORT` (loopback), or nothing (the default).
pub fn address(given: &str) -> anyhow::Result<SocketAddr> {
    let given = given.trim();
    let full = match given {
        "" => DEFAULT.to_string(),
        g if g.starts_with(':') => format!("127.0.0.1{g}"),
        g => g.to_string(),
    };
    full.parse().map_err(|_| {
        anyhow::anyhow!("--live {given:?}: not an address; give HOST:PORT (127.0.0.1:9466), :PORT for loopback, or 127.0.0.1:0 for any free port")
    })
}

/// Serves `board` on `addr` until [`Server::close`].
pub async fn serve(addr: SocketAddr, board: Board) -> anyhow::Result<Server> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        anyhow::anyhow!("--live {addr}: cannot listen there ({e}); give another port, or 127.0.0.1:0 for any free one")
    })?;
    let addr = listener.local_addr()?;
    let app = axum::Router::new()
        .route("/", get(page))
        .route("/parts", get(parts))
        .route("/metrics", get(metrics))
        .with_state(board);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await;
    });
    Ok(Server { addr, stop, task })
}

impl Server {
    /// The page's address, as a person opens it.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Keeps serving the final figures for `linger` (a last scrape, a last look), then
    /// stops.
    pub async fn close(self, linger: Duration) {
        tokio::time::sleep(linger).await;
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(2), self.task).await;
    }
}

async fn page(Shared(b): Shared<Board>) -> Html<String> {
    Html(crate::page::shell(&b.state()))
}

async fn parts(Shared(b): Shared<Board>) -> impl IntoResponse {
    axum::Json(crate::page::parts(&b.state()))
}

async fn metrics(Shared(b): Shared<Board>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::prometheus::render(&b.state()),
    )
}
