//! Pushes the board's metrics to an OTLP/HTTP receiver every few seconds and once more
//! when the run ends. A receiver that is not there or refuses is said once on stderr and
//! never stops the run.

use crate::board::Board;
use crate::otlp::Target;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A pusher running beside the run.
pub struct Pusher {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Starts pushing `board` to `target` every `every`.
pub fn start(target: Target, board: Board, every: Duration) -> Pusher {
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let start_ns = now_ns();
    let task = tokio::spawn(async move {
        let mut warned = false;
        loop {
            let last = tokio::select! {
                _ = tokio::time::sleep(every) => false,
                _ = &mut stopped => true,
            };
            let s = board.state();
            let body = crate::otlp::request(
                &crate::metrics::families(&s),
                &s.instance(),
                &host,
                start_ns,
                now_ns(),
            );
            match post(&target, body.to_string().into_bytes()).await {
                Ok(status) if (200..300).contains(&status) => {}
                failed if !warned => {
                    warned = true;
                    let why = failed.map_or_else(|e| e.to_string(), |s| format!("it answered {s}"));
                    eprintln!("warning: --otlp http://{}:{}{}: {why}; the run goes on, pushing again every {} s", target.host, target.port, target.path, every.as_secs());
                }
                _ => {}
            }
            if last {
                return;
            }
        }
    });
    Pusher { stop, task }
}

impl Pusher {
    /// Pushes the final figures, then stops.
    pub async fn close(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

/// One `POST` of a JSON body; the status the receiver answered.
async fn post(t: &Target, body: Vec<u8>) -> anyhow::Result<u16> {
    let talk = async {
        let mut s = tokio::net::TcpStream::connect((t.host.as_str(), t.port)).await?;
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            t.path,
            t.host,
            t.port,
            body.len()
        );
        s.write_all(head.as_bytes()).await?;
        s.write_all(&body).await?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).await?;
        let line = String::from_utf8_lossy(&answer);
        line.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse::<u16>().ok())
            .ok_or_else(|| anyhow::anyhow!("no HTTP status in its answer"))
    };
    tokio::time::timeout(Duration::from_secs(5), talk)
        .await
        .map_err(|_| anyhow::anyhow!("no answer within 5 s"))?
}
