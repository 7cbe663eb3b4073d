//! One module per subcommand: its arguments (clap derive) and the call into the crate
//! that does the work. Each returns the process's exit code.

pub mod bench;
pub mod check;
pub mod compare;
pub mod demo;
pub mod floor;
pub mod history;
pub mod init;
pub mod init_files;
pub mod k8s;
pub mod live;
pub mod mcp;
pub mod merge;
pub mod mock;
pub mod prices;
pub mod ramp;
pub mod run;
pub mod schema;
pub mod schema_reference;
pub mod soak;
pub mod workload;

/// With two or more cores and unless switched off: Plimsoll pins itself (this thread,
/// and so the runtime's threads built after it) to its own core(s) and returns the split,
/// whose SUT cores each step pins the SUT to. Says so on the terminal when it cannot.
pub fn partition(wanted: bool) -> Option<probe::affinity::Partition> {
    if !wanted {
        return None;
    }
    let cores = probe::affinity::available();
    let Some(p) = probe::affinity::split(&cores) else {
        eprintln!(
            "note: one core only — Plimsoll and the SUT share it (the harness check tells when that mattered)"
        );
        return None;
    };
    match probe::affinity::pin_current(&p.harness) {
        Ok(()) => Some(p),
        Err(e) => {
            eprintln!("note: could not pin Plimsoll to its own core ({e}); Plimsoll and the SUT share the cores");
            None
        }
    }
}

/// Before load: warns when other processes already keep the machine busy (measured over
/// 300 ms), since a step on a busy machine measures the machine too.
pub fn preflight() {
    let cores = probe::affinity::available().len();
    let others = probe::cpustat::others_now(std::time::Duration::from_millis(300));
    if analysis::trust::busy_before(others, cores) {
        eprintln!("{}", report::check::busy_machine(others, cores));
    }
}

/// Before a command that starts SUTs: removes what Plimsolls killed earlier left behind
/// (saying so), then starts the watchdog that cleans up after this one if it is killed.
pub fn guard_up() {
    let roots = [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup/memory",
        "/sys/fs/cgroup/cpu",
        "/sys/fs/cgroup/cpuset",
    ]
    .map(std::path::Path::new);
    for d in guard::sweep(&roots, &std::env::temp_dir()) {
        eprintln!(
            "removed what a killed Plimsoll left behind: {}",
            d.display()
        );
    }
    let started = std::env::current_exe().and_then(|exe| guard::start(&exe, "__watchdog"));
    if let Err(e) = started {
        eprintln!("note: no watchdog ({e}): should Plimsoll be killed, its SUT could outlive it");
    }
}

/// A multi-threaded tokio runtime for a subcommand, its threads named as the driver's
/// (a step's sessions run on them; a step's mock has a runtime of its own).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name(drive::THREAD_NAME)
        .enable_all()
        .build()
}

/// What every load command (run, ramp, soak) can change about the load.
#[derive(clap::Args, Clone, Debug)]
pub struct LoadArgs {
    /// The session file (overrides [session] file), e.g. a streamed variant.
    #[arg(long)]
    pub session: Option<std::path::PathBuf>,
    /// The responsiveness probe: GET this path on the SUT every 100 ms beside the load (e.g. /health); RESULT gets probe_p50_ms and probe_p99_ms (overrides [step] probe_path).
    #[arg(long, value_name = "PATH")]
    pub probe: Option<String>,
    /// Slow consumers: this share of the sessions (0.1 = every tenth) read replies at --slow-read-bps; RESULT's `slow` gives the others' latency apart.
    #[arg(long, value_name = "SHARE")]
    pub slow_share: Option<f64>,
    /// How fast the slow consumers read, bytes a second.
    #[arg(long, default_value_t = 65536.0)]
    pub slow_read_bps: f64,
    /// Set a session axis over the session file, e.g. messages=150 or pad=4096 (repeatable): turns, think_ms; a bus's messages, rate, subscribers, publishers, pad, settle_ms.
    #[arg(long, value_name = "NAME=V")]
    pub set: Vec<String>,
    /// Voice calls: keep their audio here (default .plimsoll/audio/STAMP), as NAME.sent.wav (what the caller said), NAME.heard.wav (every sample of the bot's it received) and NAME.txt (where each turn and reply begins). Whose: [step] keep_audio, "failed" by default (calls with a failed, wrong, unheard or sound-only reply), "all" or "none"; at most [step] keep_audio_calls (20) a step.
    #[arg(long, value_name = "DIR")]
    pub keep_audio: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub replay: workload::ReplayArgs,
}

impl LoadArgs {
    pub fn sets(&self) -> anyhow::Result<Vec<(String, f64)>> {
        self.set
            .iter()
            .map(|s| ::ramp::sweep::parse_set(s).map_err(anyhow::Error::msg))
            .collect()
    }

    pub fn slow(&self) -> Option<(f64, f64)> {
        self.slow_share.map(|s| (s, self.slow_read_bps))
    }
}

/// The cap of a ladder command (ramp, compare, soak).
#[derive(clap::Args, Clone, Debug)]
pub struct CapArgs {
    /// CPU cap for the SUT, in cores.
    #[arg(long, default_value_t = 2.0)]
    pub cpus: f64,
    /// Memory cap for the SUT.
    #[arg(long, default_value = "2G")]
    pub mem: String,
    /// Run without a cap.
    #[arg(long)]
    pub no_cap: bool,
    /// How the CPU cap is held where the SUT could run on more cores than --cpus: cpuset (the default: ceil(--cpus) cores of its own, under a quota that binds only for a fraction of a core, so it runs as on a box of that size) or quota (a quota over every core it may use, as docker run --cpus and Kubernetes limits: bursts on many cores, then throttled).
    #[arg(long, value_name = "HOW", default_value = "cpuset", value_parser = cap::CpuBy::parse)]
    pub cpu_by: cap::CpuBy,
}

impl CapArgs {
    pub fn spec(&self) -> anyhow::Result<Option<cap::CapSpec>> {
        cap_unless(self.no_cap, self.cpus, Some(&self.mem), self.cpu_by)
    }
}

/// The cap of a ladder command: none with `--no-cap`, else `--cpus` and `--mem`.
pub fn cap_unless(
    no_cap: bool,
    cpus: f64,
    mem: Option<&str>,
    by: cap::CpuBy,
) -> anyhow::Result<Option<cap::CapSpec>> {
    if no_cap {
        return Ok(None);
    }
    cap_spec(Some(cpus), mem, by)
        .map(Some)
        .map_err(anyhow::Error::msg)
}

/// `--cpus` and `--mem` as a cap, defaults filled in.
pub fn cap_spec(
    cpus: Option<f64>,
    mem: Option<&str>,
    by: cap::CpuBy,
) -> Result<cap::CapSpec, String> {
    let d = cap::CapSpec::default();
    let cpus = cpus.unwrap_or(d.cpus);
    if cpus.is_nan() || cpus <= 0.0 {
        return Err(format!("--cpus {cpus}: must be more than 0"));
    }
    Ok(cap::CapSpec {
        cpus,
        mem_bytes: mem.map(cap::parse_mem).transpose()?.unwrap_or(d.mem_bytes),
        by,
    })
}

/// What a command gives CI: `--junit FILE`, `--summary FILE`, and under GitHub Actions the
/// summary appended to the job's summary page — by `compare` (a CI gate) always, by `run`
/// and `ramp` when either file was asked for (a job may run many steps). A summary page
/// that cannot be written is a warning: the command's own exit code stands.
pub struct ForCi<'a> {
    pub junit: Option<&'a std::path::Path>,
    pub summary: Option<&'a std::path::Path>,
    pub job_summary_always: bool,
}

impl ForCi<'_> {
    pub fn write(&self, xml: impl FnOnce() -> String, markdown: String) -> anyhow::Result<()> {
        let write = |p: &std::path::Path, text: String| {
            std::fs::write(p, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", p.display()))
        };
        if let Some(p) = self.junit {
            write(p, xml())?;
        }
        if let Some(p) = self.summary {
            write(p, markdown.clone())?;
        }
        let asked = self.junit.is_some() || self.summary.is_some();
        if self.job_summary_always || asked {
            if let Err(e) = step_summary(&markdown) {
                eprintln!("warning: {e}; the job summary was not written");
            }
        }
        Ok(())
    }
}

/// Under GitHub Actions ($GITHUB_STEP_SUMMARY set), Markdown appended to the job's
/// summary page; elsewhere nothing.
pub fn step_summary(markdown: &str) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| anyhow::anyhow!("GITHUB_STEP_SUMMARY {}: {e}", path.to_string_lossy()))?;
    writeln!(f, "{markdown}")
        .map_err(|e| anyhow::anyhow!("GITHUB_STEP_SUMMARY {}: {e}", path.to_string_lossy()))
}
