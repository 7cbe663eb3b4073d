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
        "workload {} (sha256 of {} source file(s))\n{} turns, {} model calls\n{}",
        &f.sha256[..16],
        w.source.files.len(),
        f.turns,
        f.calls,
        w.summary.text()
    )
}
