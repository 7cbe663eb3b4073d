//! `plimsoll bench driver`: the driver alone. C sessions of HTTP turns (a JSON body of a
//! chosen size, the session's marker in it) against a SUT that answers at once — a null
//! server, a process of its own (`plimsoll bench null-sut`, so each side holds one socket
//! a session) — in a closed loop for a window, session after session: turns a second, and
//! the driver's CPU a turn by the kernel's count of its threads (`plimsoll-drive`, the
//! name a step's driver runs under), beside the null SUT's. What a step's `driver` part
//! costs a turn with no SUT or mock in the way.

use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const REPLY: &str = r#"{"reply":"ok: the null SUT answers at once"}"#;

pub struct DriverBenchOptions {
    /// Concurrent sessions, a row each.
    pub sessions: Vec<usize>,
    pub turns: u32,
    pub body_bytes: usize,
    pub window: Duration,
    /// This executable, to start the null SUT.
    pub exe: std::path::PathBuf,
}

/// One row: C sessions driven for the window.
#[derive(Clone, Debug, Serialize)]
pub struct DriverBenchRow {
    pub sessions: usize,
    pub turns: u64,
    pub turns_per_s: f64,
    pub failed_sessions: u64,
    /// The driver's threads' CPU a turn, µs, and in cores over the window.
    pub driver_us_per_turn: f64,
    pub driver_cores: f64,
    /// The null SUT's CPU a turn, µs (what answering costs; not the driver's).
    pub sut_us_per_turn: f64,
    /// The driver's own scheduling lag (its ticker), p99.
    pub lag_p99_ms: f64,
    pub turn_p50_ms: f64,
}

/// Every row against one null SUT.
pub fn run_driver_bench(o: &DriverBenchOptions) -> anyhow::Result<Vec<DriverBenchRow>> {
    let (sut, addr) = start_null_sut(&o.exe)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name(drive::THREAD_NAME)
        .enable_all()
        .build()?;
    let spec = drive::SessionSpec::parse(&session_text(o), "bench-driver.toml")
        .map_err(|e| anyhow::anyhow!("the bench's session: {e}"))?;
    let mut rows = Vec::new();
    for &c in &o.sessions {
        eprintln!(
            "bench driver: {c} sessions for {:.1} s …",
            o.window.as_secs_f64()
        );
        rows.push(rt.block_on(one_row(&spec, (&sut, addr), c, o.window))?);
    }
    Ok(rows)
}

/// The session: `turns` POSTs of a JSON body padded to `body_bytes`.
fn session_text(o: &DriverBenchOptions) -> String {
    let marker = "[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]]";
    let pad = "x".repeat(o.body_bytes.saturating_sub(marker.len() + 30));
    format!(
        "method = \"POST\"\nurl = \"{{{{base}}}}/turn\"\nturns = {}\nbody = '{{\"message\": \"{marker} {pad}\"}}'\n",
        o.turns.max(1)
    )
}

async fn one_row(
    spec: &drive::SessionSpec,
    (sut, addr): (&guard::Owned, SocketAddr),
    c: usize,
    window: Duration,
) -> anyhow::Result<DriverBenchRow> {
    let opts = options(addr, c, window);
    let before = cpu_by_part(sut.pid())?;
    let started = std::time::Instant::now();
    let r = drive::drive(spec, &opts, Arc::new(drive::Progress::default())).await?;
    let secs = started.elapsed().as_secs_f64();
    let after = cpu_by_part(sut.pid())?;
    let turns = r.turns.max(1) as f64;
    let us = |a: u64, b: u64| b.saturating_sub(a) as f64 / 1000.0;
    let (driver, sut_us) = (us(before.0, after.0), us(before.1, after.1));
    Ok(DriverBenchRow {
        sessions: c,
        turns: r.turns,
        turns_per_s: r.turns as f64 / secs,
        failed_sessions: r.sessions_failed,
        driver_us_per_turn: driver / turns,
        driver_cores: driver / 1e6 / secs,
        sut_us_per_turn: sut_us / turns,
        lag_p99_ms: r.lag_us.value_at_quantile(0.99) as f64 / 1000.0,
        turn_p50_ms: r.turn_us.value_at_quantile(0.5) as f64 / 1000.0,
    })
}

/// A closed loop: each of the `c` slots runs session after session until `window`.
fn options(sut: SocketAddr, c: usize, window: Duration) -> drive::DriveOptions {
    drive::DriveOptions {
        concurrency: c,
        base: format!("http://{sut}"),
        replicas: Vec::new(),
        seed: 1,
        step_timeout: window + Duration::from_secs(30),
        allow_remote: false,
        arrival_rate: None,
        resident: None,
        on_resident: None,
        slow: None,
        churn: Some(window),
        shard: None,
        start_at: None,
        name_prefix: String::new(),
        replay: None,
        voice_owner: None,
        keep_audio: None,
        services: Vec::new(),
    }
}

/// (driver threads' ns, the null SUT's ns) so far, by the kernel's count.
fn cpu_by_part(sut: u32) -> anyhow::Result<(u64, u64)> {
    let driver = probe::own::threads_cpu_ns()
        .into_iter()
        .filter(|(name, _)| name.starts_with(drive::THREAD_NAME))
        .map(|(_, ns)| ns)
        .sum();
    let sut_threads = probe::own::threads_cpu_ns_of(sut);
    if sut_threads.is_empty() {
        anyhow::bail!("the null SUT (pid {sut}) is gone");
    }
    Ok((driver, sut_threads.iter().map(|(_, ns)| ns).sum()))
}

/// Starts the null SUT (`exe bench null-sut`) and waits for the address it listens on.
fn start_null_sut(exe: &std::path::Path) -> anyhow::Result<(guard::Owned, SocketAddr)> {
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["bench", "null-sut"]);
    crate::mock_process::listening(&mut cmd, "null SUT")
}

/// `plimsoll bench null-sut`: the null SUT, until killed. Every request on a connection
/// gets the same small JSON reply at once, on one thread; it prints the address it
/// listens on first.
pub fn serve_null_sut() -> anyhow::Result<()> {
    crate::raise_nofile_limit();
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    println!("listening http://{}", listener.local_addr()?);
    std::io::Write::flush(&mut std::io::stdout())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = TcpListener::from_std(listener)?;
        loop {
            match listener.accept().await {
                Ok((sock, _)) => {
                    tokio::spawn(serve(sock));
                }
                // Out of files or a connection gone before it was taken: the next one may
                // still be served.
                Err(e) => {
                    eprintln!("bench null-sut: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    })
}

/// One connection: read a request (head and a content-length body), answer, again.
async fn serve(mut sock: TcpStream) {
    let _ = sock.set_nodelay(true);
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{REPLY}",
        REPLY.len()
    );
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 16384];
    loop {
        let Some(end) = request_end(&buf) else {
            match sock.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        buf.drain(..end);
        if sock.write_all(head.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Where the first whole request in `buf` ends (its head and its content-length body).
fn request_end(buf: &[u8]) -> Option<usize> {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&buf[..head_end]).ok()?;
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    (buf.len() >= head_end + len).then_some(head_end + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_ends_after_its_body() {
        let r = b"POST /turn HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET";
        assert_eq!(request_end(r), Some(r.len() - 3));
        assert_eq!(request_end(&r[..r.len() - 4]), None, "body not all in");
        assert_eq!(request_end(b"GET / HTTP/1.1\r\n\r\n"), Some(18));
    }
}
