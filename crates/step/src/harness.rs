//! Harness mode: the user's own harness drives its sessions in-process and prints a
//! `RESULT {…}` line; Plimsoll starts it against a fresh mock, samples its process tree,
//! checks the line against the schema (naming the bad key), and merges its own probe
//! figures and the mock's ledger into it.
//!
//! A harness that prints `PLIMSOLL BASELINE` once it has set up, before its sessions
//! start, gets the memory at that moment as its baseline, so `rss_kb_per_session` is the
//! marginal cost of a session; without it the baseline is the process as it started.

use crate::judge::judge;
use crate::measured::{Latencies, Measured};
use crate::own_cpu::Snapshot;
use crate::rig::Rig;
use anyhow::{bail, Context};
use experiment::Config;
use probe::{Ready, Sampler, Sut, SutSpec};
use result::schema::check_harness_line;
use result::StepReport;
use std::time::Duration;

pub(crate) async fn run(
    cfg: &Config,
    opts: &crate::StepOptions,
    mut rig: Rig,
    cmd: Vec<String>,
) -> anyhow::Result<StepReport> {
    let spec = SutSpec {
        command: cmd.iter().map(|c| rig.fill(c)).collect(),
        env: rig.env.clone(),
        cwd: Some(cfg.cwd.clone()),
        ready: Ready::Started,
        ready_timeout: Duration::from_secs(5),
        stop_grace: Duration::from_secs_f64(cfg.stop_grace_s),
        cores: opts
            .partition
            .as_ref()
            .map_or(Vec::new(), |p| p.sut.clone()),
        log_pattern: cfg.log_pattern.clone(),
        role: probe::Role::Sut,
    };
    let mut h = Sut::start(&spec)
        .await
        .with_context(|| format!("starting the harness {cmd:?}"))?;
    let sampler = Sampler::start(h.pid, Duration::from_millis(cfg.sample_ms));
    rig.deps
        .sample(cfg, Duration::from_millis(cfg.sample_ms), sampler.started());
    let own0 = Snapshot::take(&rig.mock.app);
    let t0 = tokio::time::Instant::now();
    let status = wait(
        &mut h,
        &sampler,
        t0 + Duration::from_secs_f64(cfg.timeout_s),
    )
    .await;
    let wall_ms = t0.elapsed().as_secs_f64() * 1000.0;
    let own = Snapshot::take(&rig.mock.app);
    let probe = sampler.finish();
    tokio::time::sleep(Duration::from_millis(50)).await; // let the output readers catch up
    let stopped = h.stop().await;
    let v = result_line(cfg, status, &stopped.tail)?;
    rig.concurrency = (v["concurrency"].as_u64().unwrap_or(0) as usize).max(1);
    let mut m = measured(&v, wall_ms);
    m.timed_out = status.is_none();
    own0.charge(&own, &mut m);
    m.partition = opts.partition.clone().map(|p| (p, "affinity"));
    let died = status.filter(|s| !s.success());
    Ok(judge(cfg, rig, probe, died, stopped, m).await)
}

/// Until the harness exits or the step's time is up; the memory at `PLIMSOLL BASELINE`
/// (printed once it has set up) becomes the baseline.
async fn wait(
    h: &mut Sut,
    sampler: &Sampler,
    deadline: tokio::time::Instant,
) -> Option<std::process::ExitStatus> {
    let mut rebased = false;
    while tokio::time::Instant::now() < deadline {
        if !rebased && h.tail().lines().any(|l| l.trim() == "PLIMSOLL BASELINE") {
            sampler.rebase();
            rebased = true;
        }
        if let Some(s) = h.exited() {
            return Some(s);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// The harness's last `RESULT {json}` line, checked against the schema.
fn result_line(
    cfg: &Config,
    status: Option<std::process::ExitStatus>,
    tail: &str,
) -> anyhow::Result<serde_json::Value> {
    let Some(line) = tail.lines().rev().find_map(|l| l.strip_prefix("RESULT ")) else {
        let why = match status {
            None => format!(
                "was still running after the step timeout of {} s",
                cfg.timeout_s
            ),
            Some(s) => format!("exited ({s})"),
        };
        bail!(
            "the harness {why} without printing a `RESULT {{json}}` line; its last output:\n{tail}"
        );
    };
    let v: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| anyhow::anyhow!("the harness's RESULT line is not JSON ({e}): {line}"))?;
    check_harness_line(&v)
        .map_err(|e| anyhow::anyhow!("the harness's RESULT line: {e}\n  {line}"))?;
    Ok(v)
}

/// What the harness says it measured (its wall time, when it gives none, as Plimsoll saw it).
fn measured(v: &serde_json::Value, wall_ms: f64) -> Measured {
    let num = |k: &str| v[k].as_f64();
    let int = |k: &str| v[k].as_u64().unwrap_or(0);
    Measured {
        sessions_ok: int("sessions_ok"),
        sessions_failed: int("sessions_failed"),
        turns: int("turns"),
        wall_ms: num("wall_ms").unwrap_or(wall_ms),
        lat: Latencies {
            p50_session: num("p50_session_ms"),
            p99_session: num("p99_session_ms"),
            p50_turn: num("p50_turn_ms"),
            p99_turn: num("p99_turn_ms"),
            p50_ttft: num("p50_ttft_ms"),
            p99_ttft: num("p99_ttft_ms"),
        },
        lag_p99_ms: v["harness"]["driver_lag_p99_ms"].as_f64().unwrap_or(0.0),
        errors_by_kind: v["errors_by_kind"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default(),
        ..Measured::default()
    }
}
