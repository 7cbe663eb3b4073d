//! `plimsoll merge`: the shards of one step into one RESULT and verdict.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct MergeArgs {
    /// Directories the shards wrote (`--shard-dir`), or their shard-I-of-N.json files.
    #[arg(value_name = "DIR", required_unless_present = "from")]
    pub dirs: Vec<PathBuf>,
    /// Collect the files the shards sent to this shared mock (`run --upload`) instead.
    #[arg(long, value_name = "MOCK_URL", requires = "run_id")]
    pub from: Option<String>,
    /// The run whose files to collect with --from.
    #[arg(long, value_name = "NAME")]
    pub run_id: Option<String>,
    /// With --from: wait up to this many seconds for every shard's files.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub wait: f64,
    /// With --from: the mock may be on another host.
    #[arg(long)]
    pub allow_remote: bool,
    /// How late a shard may begin after the shared start before the run is "unknown".
    #[arg(long, value_name = "MS", default_value_t = shard::merge::LATE_TOLERANCE_MS)]
    pub late_tolerance_ms: f64,
    /// Print only the RESULT line.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: MergeArgs) -> anyhow::Result<u8> {
    let (Some(mock), Some(run)) = (&a.from, &a.run_id) else {
        let shards = shard::read_dirs(&a.dirs)?;
        return Ok(print(&shard::merge(&shards, a.late_tolerance_ms), a.json));
    };
    super::guard_up();
    let dir = guard::scratch_dir("merge");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let wait = std::time::Duration::from_secs_f64(a.wait.max(0.0));
    let got = rt.block_on(step::sharded::collect(
        mock,
        run,
        &dir,
        wait,
        a.allow_remote,
    ));
    let shards = got.and_then(|_| shard::read_dirs(std::slice::from_ref(&dir)));
    guard::drop_scratch_dir(&dir);
    let shards = shards.map_err(|e| {
        e.context(format!(
            "collecting run {run}'s shards from {mock} (did they run with --upload and --run-id {run}?)"
        ))
    })?;
    Ok(print(&shard::merge(&shards, a.late_tolerance_ms), a.json))
}

/// Prints the verdict (unless `json`) and the RESULT line; returns the exit code.
pub fn print(m: &shard::Merged, json: bool) -> u8 {
    if !json {
        for line in report::shards::summary_lines(&m.result, m.cause.as_ref(), &m.checks) {
            eprintln!("{line}");
        }
        for (kind, first) in &m.first_errors {
            eprintln!("  error {kind} (first seen): {first}");
        }
        for line in report::shards::budget_lines(&m.result, &m.budget, &m.breaches) {
            eprintln!("{line}");
        }
    }
    println!("{}", m.result.line());
    m.result.exit_code(&m.checks)
}
