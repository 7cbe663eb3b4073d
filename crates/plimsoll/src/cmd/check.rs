//! `plimsoll check`: two sessions side by side (a second beside the first catches one
//! conversation shared by both before any ramp does), every failure explained in plain
//! words — before a ramp spends minutes on a setup that cannot work — and each kind of
//! prompt-cache break with its fix.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct CheckArgs {
    /// The experiment file (paths in it count from its directory).
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// The session file (overrides [session] file), e.g. a streamed variant.
    #[arg(long)]
    pub session: Option<PathBuf>,
    /// Let Plimsoll and the SUT share every core.
    #[arg(long)]
    pub no_partition: bool,
}

/// Sessions a check runs side by side.
const SESSIONS: usize = 2;

/// Runs the check; returns the exit code (0: all well, 3: something to fix).
pub fn check(a: CheckArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cfg = experiment::Config::load(&a.config)?;
    super::preflight();
    let opts = step::StepOptions {
        concurrency: Some(SESSIONS),
        partition: super::partition(!a.no_partition),
        session: a.session.clone(),
        ..Default::default()
    };
    let what = step::preflight(&cfg, &opts)?;
    eprintln!(
        "plimsoll check: two {} side by side against {}",
        what.unit.many(),
        cfg.command.join(" ").replace("{{port}}", "PORT")
    );
    let Some(r) = super::runtime()?.block_on(step::start(&cfg, &opts, step::Start::default()))?
    else {
        eprintln!("plimsoll check: interrupted; the SUT was stopped");
        return Ok(130);
    };
    let session_file = a.session.as_ref().unwrap_or(&cfg.session_file);
    let spec = drive::SessionSpec::load(session_file).ok();
    let sent = report::check::Sent {
        file: session_file,
        json_keys: spec.as_ref().and_then(|s| s.json_keys()),
        shared: spec
            .iter()
            .flat_map(|s| s.shared_values())
            .map(|v| v.to_string())
            .collect(),
    };
    let found = report::check::problems(&r, &sent);
    // A cache break costs money, not correctness: said either way, never an exit code.
    for line in report::cost::explain(&r.result) {
        eprintln!("{line}");
    }
    if found.is_empty() {
        for line in report::check::all_well(&r) {
            eprintln!("{line}");
        }
        return Ok(0);
    }
    eprintln!("{}:", report::words::count(found.len() as u64, "problem"));
    for (i, p) in found.iter().enumerate() {
        eprintln!("  {}. {p}", i + 1);
    }
    Ok(3)
}
