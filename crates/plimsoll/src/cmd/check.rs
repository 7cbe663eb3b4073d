//! `plimsoll check`: one session at concurrency 1, every failure explained in plain
//! words — before a ramp spends minutes on a setup that cannot work — and each kind of
//! prompt-cache break with its fix.

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct CheckArgs {
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// The session file (overrides [session] file), e.g. a streamed variant.
    #[arg(long)]
    pub session: Option<PathBuf>,
    /// Let Plimsoll and the SUT share every core.
    #[arg(long)]
    pub no_partition: bool,
}

/// Runs the check; returns the exit code (0: all well, 3: something to fix).
pub fn check(a: CheckArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cfg = experiment::Config::load(&a.config)?;
    super::preflight();
    let opts = step::StepOptions {
        concurrency: Some(1),
        partition: super::partition(!a.no_partition),
        session: a.session.clone(),
        ..Default::default()
    };
    eprintln!(
        "plimsoll check: one session against {}",
        cfg.command.join(" ").replace("{{port}}", "PORT")
    );
    let r = super::runtime()?.block_on(step::run_step(&cfg, &opts))?;
    let session_file = a.session.as_ref().unwrap_or(&cfg.session_file);
    let sent = report::check::Sent {
        file: session_file,
        json_keys: drive::SessionSpec::load(session_file)
            .ok()
            .and_then(|s| s.json_keys()),
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
