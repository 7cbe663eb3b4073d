//! The one shared mock, as the shards of a run talk to it: its health waited for, the
//! barrier every shard meets at, its ledger's entries of a shard's sessions added up,
//! and the drop box a shard's files go into and `plimsoll merge --from` collects.

use anyhow::{bail, Context};
use hdrhistogram::Histogram;
use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a shard waits at the barrier for the others.
pub const BARRIER_TIMEOUT: Duration = Duration::from_secs(900);

/// A run's name goes into the mock's URLs: letters, digits, `.`, `_` and `-` only.
pub fn check_run_id(run: &str) -> anyhow::Result<()> {
    let ok = !run.is_empty()
        && run.len() <= 64
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        bail!("--run-id {run:?}: use 1 to 64 letters, digits, '.', '_' or '-'");
    }
    Ok(())
}

/// GET a JSON document from the shared mock.
pub(crate) async fn get_json(
    base: &str,
    path: &str,
    allow_remote: bool,
) -> anyhow::Result<serde_json::Value> {
    call(base, "GET", path, Vec::new(), allow_remote).await
}

/// A request to the shared mock whose answer is JSON.
async fn call(
    base: &str,
    method: &str,
    path: &str,
    body: Vec<u8>,
    allow_remote: bool,
) -> anyhow::Result<serde_json::Value> {
    let (addr, _) = drive::address::target(base, allow_remote)?;
    let mut conn = drive::http::Conn::new(addr);
    let (status, body) = conn
        .simple(method, path, bytes::Bytes::from(body))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("asking the mock at {base} for {path}"))?;
    if status != 200 {
        let said = String::from_utf8_lossy(&body);
        bail!("the mock at {base} answered {method} {path} with status {status} ({said}): is it a `plimsoll mock` of this version?");
    }
    serde_json::from_slice(&body).with_context(|| format!("{base}{path} is not JSON"))
}

/// The ledger's entries of these sessions, added (by the ledger's own `Totals::add`);
/// the provider's unloaded time of each one that went through, plus think time, into
/// `ideal`.
pub(crate) fn mock_counts(
    ledger: &mock::ledger::Summary,
    late_p99_ms: f64,
    mine: &HashSet<String>,
    failed: &HashSet<String>,
    think_ms: f64,
    ideal: &mut Histogram<u64>,
) -> shard::MockCounts {
    let mut m = shard::MockCounts {
        late_p99_ms,
        ..Default::default()
    };
    for (name, e) in ledger.sessions.iter().filter(|(k, _)| mine.contains(*k)) {
        m.marked_sessions += 1;
        m.totals.add(&mock::ledger::Totals::from(e));
        if !failed.contains(name) {
            let _ = ideal.record((((e.llm_ms + think_ms) * 1000.0) as u64).max(1));
        }
    }
    // The ledger keeps violations by kind for the whole run: these sessions' from its list.
    for v in ledger
        .violations
        .iter()
        .filter(|v| mine.contains(&v.session))
    {
        *m.totals
            .violations_by_kind
            .entry(v.kind.to_string())
            .or_insert(0) += 1;
    }
    m
}

/// Both files into the shared mock's drop box, for `plimsoll merge --from`.
pub(crate) async fn upload(
    mock: &str,
    file: &std::path::Path,
    run: &str,
    allow_remote: bool,
) -> anyhow::Result<()> {
    for f in [file.with_extension("hlog"), file.to_path_buf()] {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let path = format!("/plimsoll/shards/{run}/files/{name}");
        call(mock, "PUT", &path, std::fs::read(&f)?, allow_remote)
            .await
            .with_context(|| format!("sending {} to the shared mock", f.display()))?;
    }
    Ok(())
}

/// How long a shard waits for the shared mock to answer (in a cluster, pods start in
/// any order).
pub const MOCK_WAIT: Duration = Duration::from_secs(120);

pub(crate) async fn wait_for_mock(mock: &str, allow_remote: bool) -> anyhow::Result<()> {
    let until = tokio::time::Instant::now() + MOCK_WAIT;
    let mut said = false;
    loop {
        match get_json(mock, "/plimsoll/health", allow_remote).await {
            Ok(_) => return Ok(()),
            Err(e) if tokio::time::Instant::now() >= until => {
                return Err(e.context(format!(
                    "the shared mock (--mock) did not answer within {} s",
                    MOCK_WAIT.as_secs()
                )))
            }
            Err(e) => {
                if !std::mem::replace(&mut said, true) {
                    eprintln!(
                        "waiting up to {} s for the shared mock at {mock} ({e:#})",
                        MOCK_WAIT.as_secs()
                    );
                }
                tokio::time::sleep(Duration::from_millis(500)).await
            }
        }
    }
}

/// Waits at the shared mock until every shard of the run is up (shard `index` of
/// `count`); the start it gives.
pub(crate) async fn barrier(
    mock: &str,
    run: &str,
    (index, count): (usize, usize),
    allow_remote: bool,
) -> anyhow::Result<SystemTime> {
    let body = serde_json::json!({"index": index, "parties": count, "lead_ms": 3000});
    let path = format!("/plimsoll/shards/{run}/barrier");
    let wait = call(
        mock,
        "POST",
        &path,
        body.to_string().into_bytes(),
        allow_remote,
    );
    let answer = tokio::time::timeout(BARRIER_TIMEOUT, wait)
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "not every one of the {} shards of run {run} reached the barrier within {} min",
                count,
                BARRIER_TIMEOUT.as_secs() / 60
            )
        })??;
    let ms = answer["start_at_unix_ms"]
        .as_f64()
        .context("the barrier's answer has no start_at_unix_ms")?;
    Ok(UNIX_EPOCH + Duration::from_secs_f64(ms / 1000.0))
}

/// The files a run's shards sent to the shared mock, written into `dir`; waits up to
/// `wait` for every shard's (polling every 2 s). Returns how many shards' files came.
pub async fn collect(
    mock: &str,
    run: &str,
    dir: &std::path::Path,
    wait: Duration,
    allow_remote: bool,
) -> anyhow::Result<usize> {
    check_run_id(run)?;
    let until = tokio::time::Instant::now() + wait;
    loop {
        let got = get_json(mock, &format!("/plimsoll/shards/{run}/files"), allow_remote).await?;
        let files = got["files"].as_object().cloned().unwrap_or_default();
        let shards = files.keys().filter(|k| k.ends_with(".json")).count();
        let expected = files
            .iter()
            .find(|(k, _)| k.ends_with(".json"))
            .and_then(|(_, v)| serde_json::from_str::<serde_json::Value>(v.as_str()?).ok())
            .and_then(|c| c["count"].as_u64());
        let complete = expected.is_some_and(|n| shards as u64 >= n);
        if complete || tokio::time::Instant::now() >= until {
            std::fs::create_dir_all(dir)?;
            for (name, text) in &files {
                std::fs::write(dir.join(name), text.as_str().unwrap_or_default())?;
            }
            return Ok(shards);
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}
