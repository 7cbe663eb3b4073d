//! MCP over stdio (`plimsoll mcp --stdio`): one JSON-RPC message per line in, one per
//! line out, answers in whatever order their tools finish. Either the server runs in this
//! process (a scenario of its own), or — when a mock is running, as in every step, where
//! the SUT's environment names it in `PLIMSOLL_MOCK_URL` — each line is relayed to that
//! mock's `/mcp` (`relay.rs`), so the tools, their state, their failures and the ledger
//! are the step's, and this process is what an agent pays for a stdio server: a process,
//! its memory (`--ballast-mb` makes it weigh what a real server would), its threads.
//! A line that is not a message gets the protocol's error; nothing a client writes stops
//! the server but the end of its input.

use crate::mcp::lines::{next_line, writer};
use crate::mcp::server::{McpServer, Transport, Via};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};

/// Serves one connection (stdin and stdout) with the server in this process, until the
/// input ends and every answer is written.
pub async fn serve<R, W>(server: Arc<McpServer>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, written) = writer(output);
    let session: Arc<Mutex<Option<String>>> = Arc::default();
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    let mut pending = tokio::task::JoinSet::new();
    let pid = std::process::id();
    while next_line(&mut input, &mut buf).await?.is_some() {
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let sid = session.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let via = Via {
            transport: Transport::Stdio,
            session: sid.as_deref(),
            headers: None,
            pid: Some(pid),
        };
        let a = server.handle(&buf, &via);
        if let Some(s) = a.new_session {
            *session.lock().unwrap_or_else(|p| p.into_inner()) = Some(s);
        }
        let Some(body) = a.body else { continue };
        if a.delay.is_zero() {
            let _ = tx.send(body);
        } else {
            let tx = tx.clone();
            pending.spawn(async move {
                tokio::time::sleep(a.delay).await;
                let _ = tx.send(body);
            });
        }
    }
    while pending.join_next().await.is_some() {}
    drop(tx);
    let _ = written.await;
    Ok(())
}

/// How `plimsoll mcp --stdio` runs.
pub struct StdioOptions {
    pub scenario: crate::provider::scenario::Scenario,
    pub seed: Option<u64>,
    /// The running mock to relay to (its base URL); none: serve in this process.
    pub mock: Option<String>,
    /// Memory held for the life of the process, in MiB (a heavier server's weight).
    pub ballast_mb: usize,
}

/// `plimsoll mcp --stdio` in the foreground: stdin to stdout until stdin ends.
pub fn run(o: StdioOptions) -> anyhow::Result<()> {
    let ballast = vec![1u8; o.ballast_mb << 20];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result = rt.block_on(async move {
        let (input, output) = (tokio::io::stdin(), tokio::io::stdout());
        match o.mock {
            Some(base) => crate::mcp::relay::relay(&base, input, output).await,
            None => {
                let seed = o.seed.unwrap_or(o.scenario.seed);
                let server = Arc::new(McpServer::new(&o.scenario.mcp, seed));
                serve(server, input, output)
                    .await
                    .map_err(anyhow::Error::from)
            }
        }
    });
    std::hint::black_box(&ballast);
    result
}
