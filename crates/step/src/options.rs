//! What a caller can ask of one step beyond its config: the concurrency, a cap and the
//! cores, an arrival rate, slow consumers, residents, a soak, a harness, an arm, session
//! axes.

#[derive(Clone, Debug, Default)]
pub struct StepOptions {
    /// Overrides `[step] concurrency`.
    pub concurrency: Option<usize>,
    pub allow_remote: bool,
    /// Print a live progress line on stderr (only when it is a terminal).
    pub progress: bool,
    /// Harness mode from the command line (run through `sh -c`); overrides `[harness]`.
    pub harness: Option<String>,
    /// Open model: sessions arrive at this rate per second (overrides `[step] arrival_rate`).
    pub rate: Option<f64>,
    /// Run the SUT under this CPU and memory cap (a cgroup made for the step).
    pub cap: Option<cap::CapSpec>,
    /// Slow consumers: (share, bytes a second); overrides `[step] slow_share`.
    pub slow: Option<(f64, f64)>,
    /// The responsiveness probe's path on the SUT (overrides `[step] probe_path`).
    pub probe_path: Option<String>,
    /// Resident sessions (overrides `[step] resident`): this many opened first, the
    /// concurrency of them active at a time.
    pub resident: Option<usize>,
    /// A soak: the load held for a duration with session churn, then a drain, the SUT
    /// sampled into a series all along (see `soak`).
    pub soak: Option<crate::soak::SoakPlan>,
    /// Turns a session (overrides the session file's `turns`): long sessions in a soak.
    pub turns: Option<u32>,
    /// The session file, instead of the config's `[session] file`.
    pub session: Option<std::path::PathBuf>,
    /// Cores for Plimsoll and for the SUT (Plimsoll pins itself before the runtime
    /// starts; the step pins the SUT).
    pub partition: Option<probe::affinity::Partition>,
    /// Run this `[[arm]]` of the config (its command and environment over `[sut]`'s).
    pub arm: Option<String>,
    /// Session axes set over the session file (`--set messages=150`, a sweep's point).
    pub set: Vec<(String, f64)>,
    /// A recorded workload to replay (overrides `[workload]`).
    pub workload: Option<experiment::WorkloadSettings>,
    /// Called every second with the running level's figures so far (a live view's feed).
    pub on_tick: Option<OnTick>,
    /// Where voice calls' audio is kept (`--keep-audio DIR`; default
    /// `.plimsoll/audio/STAMP`); whose is `[step] keep_audio`'s.
    pub keep_audio_dir: Option<std::path::PathBuf>,
}

/// What a step calls every second while its sessions run, with the figures so far.
#[derive(Clone)]
pub struct OnTick(pub std::sync::Arc<dyn Fn(result::live::Tick) + Send + Sync>);

impl std::fmt::Debug for OnTick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnTick")
    }
}
