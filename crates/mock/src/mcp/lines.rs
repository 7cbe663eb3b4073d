//! Newline-delimited JSON-RPC, as stdio carries it: the next line read (without its
//! end), and a writer task that puts each answer on a line of its own in the order the
//! answers are ready (tools finish out of order; lines must never interleave).

use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Writes every answer as a line, in the order they are ready.
pub fn writer<W: AsyncWrite + Unpin + Send + 'static>(
    mut out: W,
) -> (mpsc::UnboundedSender<String>, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let task = tokio::spawn(async move {
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    (tx, task)
}

/// Reads the next line (without its end); `None` at the end of input.
pub async fn next_line<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<()>> {
    buf.clear();
    let n = r.read_until(b'\n', buf).await?;
    if n == 0 {
        return Ok(None);
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Ok(Some(()))
}
