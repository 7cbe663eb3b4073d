//! `plimsoll workload`: recorded agent traffic made into a workload file
//! (`from-traces`), and a workload's summary shown again (`show`). The reading is the
//! `workload` crate's; replaying one is `run`'s and `ramp`'s (`--workload`).

use anyhow::Context;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum WorkloadCommand {
    /// Read OTLP JSON traces (GenAI spans) or JSONL conversations into a workload file.
    FromTraces(FromTraces),
    /// Print a workload file's summary and fingerprint.
    Show {
        /// The workload file.
        file: PathBuf,
    },
}

#[derive(Args)]
pub struct FromTraces {
    /// OTLP JSON files (one ExportTraceServiceRequest a line, or one document) and JSONL
    /// conversations ({"session": …, "messages": [...]}, one a line), in any mix.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Where to write the workload.
    #[arg(short, long, default_value = "workload.json")]
    pub out: PathBuf,
}

pub fn run(c: WorkloadCommand) -> anyhow::Result<u8> {
    match c {
        WorkloadCommand::FromTraces(a) => from_traces(a),
        WorkloadCommand::Show { file } => {
            let w = workload::Workload::load(&file)?;
            print!("{}", describe(&w));
            Ok(0)
        }
    }
}

fn from_traces(a: FromTraces) -> anyhow::Result<u8> {
    let w = workload::from_files(&a.files)?;
    std::fs::write(&a.out, w.to_json()).with_context(|| format!("writing {}", a.out.display()))?;
    print!("{}", describe(&w));
    println!("wrote {}", a.out.display());
    Ok(0)
}

/// The summary and the fingerprint, as a person reads them.
fn describe(w: &workload::Workload) -> String {
    let f = w.fingerprint();
    format!(
        "workload {} (sha256 of {})\n{}, {}\n{}",
        &f.sha256[..16],
        report::words::count(w.source.files.len() as u64, "source file"),
        report::words::count(f.turns as u64, "turn"),
        report::words::count(f.calls as u64, "model call"),
        w.summary.text()
    )
}

/// Replaying a recorded workload in a step (run, ramp, soak): over `[workload]`.
#[derive(Args, Clone, Debug, Default)]
pub struct ReplayArgs {
    /// Replay this workload file (from `plimsoll workload from-traces`) instead of the
    /// session file's uniform sessions; overrides [workload] file.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    /// exact: every recorded session once, at its recorded start (the concurrency is the
    /// recording's); sampled: sessions drawn with the seed at any concurrency or rate.
    #[arg(long, value_parser = ["exact", "sampled"])]
    pub replay: Option<String>,
    /// With --replay exact: recorded time divided by this (2 = twice as fast).
    #[arg(long)]
    pub speed: Option<f64>,
    /// filler: the user's messages are filler of the recorded size; recorded: the
    /// recorded text where the recording has it.
    #[arg(long, value_parser = ["filler", "recorded"])]
    pub prompts: Option<String>,
}

impl ReplayArgs {
    /// The settings these flags make over the config's `[workload]` (read only when a
    /// flag needs it), or none.
    pub fn settings(
        &self,
        config: &std::path::Path,
    ) -> anyhow::Result<Option<experiment::WorkloadSettings>> {
        let flags = self.replay.is_some() || self.speed.is_some() || self.prompts.is_some();
        let base = match (&self.workload, flags) {
            (Some(file), _) => experiment::WorkloadSettings {
                file: file.clone(),
                exact: false,
                speed: 1.0,
                recorded_prompts: false,
            },
            (None, false) => return Ok(None),
            (None, true) => experiment::Config::load(config)?.workload.ok_or_else(|| {
                anyhow::anyhow!("--replay, --speed and --prompts need a workload: --workload FILE or [workload] file in {}", config.display())
            })?,
        };
        if let Some(s) = self.speed.filter(|s| !(*s > 0.0 && s.is_finite())) {
            anyhow::bail!("--speed must be above 0, e.g. 2 for twice as fast (got {s})");
        }
        Ok(Some(experiment::WorkloadSettings {
            exact: self.replay.as_deref().map_or(base.exact, |r| r == "exact"),
            speed: self.speed.unwrap_or(base.speed),
            recorded_prompts: self
                .prompts
                .as_deref()
                .map_or(base.recorded_prompts, |p| p == "recorded"),
            file: base.file,
        }))
    }
}
