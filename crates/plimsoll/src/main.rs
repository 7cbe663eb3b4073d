//! The `plimsoll` command line: parses arguments and hands each subcommand to the
//! crate that owns it. No logic lives here.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "plimsoll",
    version,
    about = "Find the load line of an LLM-agent system: how many concurrent sessions it holds on a small box.",
    after_help = "Examples:\n  plimsoll mock                          serve a synthetic LLM on 127.0.0.1:8700\n  plimsoll mock --scenario scenarios/chat.toml --seed 7\n  plimsoll bench mock --streams 1000     measure the mock's own timing accuracy and cost"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a synthetic LLM provider (OpenAI Chat Completions and Responses, Anthropic Messages).
    #[command(
        after_help = "Point your system at it:\n  OPENAI_BASE_URL=http://127.0.0.1:8700/v1  ANTHROPIC_BASE_URL=http://127.0.0.1:8700\n\nExample:\n  plimsoll mock --listen 127.0.0.1:8700 &\n  curl -s http://127.0.0.1:8700/v1/chat/completions -H 'content-type: application/json' \\\n    -d '{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'\n\nThe first line on stdout is `listening http://ADDR` (useful with --listen 127.0.0.1:0).\n\nOther endpoints:\n  GET  /plimsoll/timing          how late frames left against their deadlines\n  GET  /plimsoll/ledger          per-session calls, tokens, injected failures, retries, integrity violations\n  GET  /metrics                  the same counters for Prometheus\n  POST /plimsoll/admin/failures  change failure rates live: {\"model\":\"*\",\"rate_limit\":0.3} ({\"reset\":true} undoes)\n\nEnvironment: PLIMSOLL_FAIL_RATE_LIMIT, _SERVER_ERROR, _OVERLOADED, _RESET, _CUT, _STALL, _SPIKE (rates 0..1),\n_RETRY_AFTER_MS, _STALL_MS, _SPIKE_MS set failures for every model, over the scenario's."
    )]
    Mock(MockArgs),
    /// Run one step: start the SUT fresh against the mock, drive C sessions, print one RESULT line.
    #[command(
        after_help = "Example:\n  plimsoll run --config examples/floor/plimsoll.toml --concurrency 50\n\nThe last stdout line is `RESULT {json}` (schema: schemas/result.v1.json); a verdict goes to stderr.\n\nExit codes:\n  0  ok\n  1  Plimsoll's own error (bad config, SUT would not start)\n  2  a threshold from the config was crossed (p99_session_ms, peak_rss_mb)\n  3  sessions failed, integrity violations, or the SUT collapsed (crash, OOM kill, timeout)\n  4  harness-bound: Plimsoll, not the SUT, was the bottleneck\n  130 interrupted (Ctrl-C); the SUT was stopped\nWhen several apply, the first in the order 3, 2, 4 wins."
    )]
    Run(RunArgs),
    /// Ramp: one fresh step per level under a resource cap until the first collapse; ceiling, knee, USL, capacity.
    #[command(
        after_help = "Examples:\n  plimsoll ramp --config examples/floor/plimsoll.toml --ladder 10,20,40,80\n  plimsoll ramp --config plimsoll.toml --ladder auto --cpus 2 --mem 2G --host 64GB,16cpu --target 100000 --out ramp-out\n\nEach row is printed as its step finishes; the verdict follows; --out writes result.json, report.md and report.html; every run goes into .plimsoll/history.db (plimsoll history, plimsoll report RUN)."
    )]
    Ramp(RampArgs),
    /// The whole job with nothing to set up: ramp the built-in floor agent and write the reports.
    #[command(
        after_help = "Example:\n  plimsoll demo                 ladder 16..512 under a 2 CPU / 2 GB cap, reports in ./plimsoll-demo"
    )]
    Demo(DemoArgs),
    /// Compare two builds of the SUT on the same ladder, interleaved and repeated, with statistics.
    #[command(
        after_help = "Examples:\n  plimsoll compare --config plimsoll.toml --base-cmd './agent-old' --branch-cmd './agent-new' --ladder 10,20 --repeat 6\n  plimsoll compare --config plimsoll.toml --base main --branch my-branch --build 'cargo build --release' --fail-on 'p99_session_ms>+10%,peak_threads>+0'\n\nWith --base/--branch (git refs of the SUT's repository, the config's [sut] cwd) each ref is checked out in its own worktree, built with --build, run with the config's [sut] command there, and the worktrees are removed afterwards.\nExit codes: 0 done, 1 Plimsoll's own error, 2 a --fail-on gate was crossed (the rows are printed)."
    )]
    Compare(CompareArgs),
    /// List the recorded ramp runs.
    History {
        #[arg(long, default_value = ".plimsoll/history.db")]
        db: PathBuf,
        /// How many runs, newest first.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Re-render a recorded run: the table and verdict, and with --out its result.json and report.md.
    Report {
        /// The run's id (see `plimsoll history`).
        run: i64,
        #[arg(long, default_value = ".plimsoll/history.db")]
        db: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Serve the floor reference agent: a bare tool loop against OPENAI_BASE_URL (what any agent costs at least).
    Floor(FloorArgs),
    /// Benchmarks of Plimsoll's own parts.
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Args)]
struct RunArgs {
    /// The experiment file.
    #[arg(long, default_value = "plimsoll.toml")]
    config: PathBuf,
    /// Concurrent sessions (overrides [step] concurrency).
    #[arg(long, short = 'c')]
    concurrency: Option<usize>,
    /// Print only the RESULT line (no verdict, no progress).
    #[arg(long)]
    json: bool,
    /// Allow session URLs that are not loopback.
    #[arg(long)]
    allow_remote: bool,
    /// Open model: sessions arrive at this rate per second (the --concurrency count of them), latency counted from each intended start.
    #[arg(long)]
    rate: Option<f64>,
    /// Cap the SUT's CPU (cores) in a cgroup made for the step.
    #[arg(long)]
    cpus: Option<f64>,
    /// Cap the SUT's memory (e.g. 2G, 512M) in a cgroup made for the step.
    #[arg(long)]
    mem: Option<String>,
    /// Harness mode: this command (run with sh -c) drives its own sessions against the mock and prints `RESULT {json}`; Plimsoll probes it and merges its figures in.
    #[arg(long)]
    harness: Option<String>,
}

#[derive(Args)]
struct RampArgs {
    #[arg(long, default_value = "plimsoll.toml")]
    config: PathBuf,
    /// Concurrency levels, e.g. 10,20,40,80, or `auto` (doubling from [step] concurrency until collapse).
    #[arg(long, default_value = "auto")]
    ladder: String,
    /// CPU cap for the SUT, in cores.
    #[arg(long, default_value_t = 2.0)]
    cpus: f64,
    /// Memory cap for the SUT.
    #[arg(long, default_value = "2G")]
    mem: String,
    /// Run without a cap.
    #[arg(long)]
    no_cap: bool,
    /// Host to project capacity onto, e.g. 64GB,16cpu.
    #[arg(long)]
    host: Option<String>,
    /// Sessions to project hosts for (with --host).
    #[arg(long)]
    target: Option<u64>,
    /// Directory for result.json and report.md.
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    allow_remote: bool,
    /// The history database every run and step is recorded in.
    #[arg(long, default_value = ".plimsoll/history.db")]
    history: PathBuf,
    /// Do not record this run.
    #[arg(long)]
    no_history: bool,
}

#[derive(Args)]
struct CompareArgs {
    #[arg(long, default_value = "plimsoll.toml")]
    config: PathBuf,
    /// The base build as a ready command (run with sh -c; {{port}} is filled in).
    #[arg(long, conflicts_with = "base")]
    base_cmd: Option<String>,
    /// The branch build as a ready command.
    #[arg(long, conflicts_with = "branch")]
    branch_cmd: Option<String>,
    /// The base as a git ref of the SUT's repository.
    #[arg(long, requires = "branch")]
    base: Option<String>,
    /// The branch as a git ref.
    #[arg(long, requires = "base")]
    branch: Option<String>,
    /// Build command run in each worktree (with --base/--branch).
    #[arg(long)]
    build: Option<String>,
    #[arg(long, default_value = "10,20")]
    ladder: String,
    /// Repetitions per level and side, interleaved base, branch, base, branch … (6 or more for a verdict).
    #[arg(long, default_value_t = 6)]
    repeat: usize,
    /// CI gates, e.g. 'p99_session_ms>+10%,peak_threads>+0'.
    #[arg(long, default_value = "")]
    fail_on: String,
    #[arg(long, default_value_t = 2.0)]
    cpus: f64,
    #[arg(long, default_value = "2G")]
    mem: String,
    #[arg(long)]
    no_cap: bool,
    /// Directory for compare.json, compare.md and compare.html.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The history database both sides are recorded in, linked as a pair.
    #[arg(long, default_value = ".plimsoll/history.db")]
    history: PathBuf,
    #[arg(long)]
    no_history: bool,
}

#[derive(Args)]
struct DemoArgs {
    /// Where the reports (and the generated setup) go.
    #[arg(long, default_value = "plimsoll-demo")]
    out: PathBuf,
    #[arg(long, default_value = "16,32,64,128,256,512")]
    ladder: String,
    /// Run without a cap.
    #[arg(long)]
    no_cap: bool,
}

#[derive(Args)]
struct FloorArgs {
    #[arg(long, default_value = "127.0.0.1:8800")]
    listen: SocketAddr,
    /// Model to ask (the scenario decides its script).
    #[arg(long, default_value = "memory")]
    model: String,
    /// The provider's OpenAI base URL (default: $OPENAI_BASE_URL).
    #[arg(long, env = "OPENAI_BASE_URL")]
    provider: String,
    /// Park an OS thread per session (the costly design, for `plimsoll compare` to catch).
    #[arg(long)]
    thread_per_session: bool,
}

#[derive(Args)]
struct MockArgs {
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8700")]
    listen: SocketAddr,
    /// Scenario file (models, timing); without it every model gets 200 ms TTFT, 5 ms/token, 50 tokens.
    #[arg(long)]
    scenario: Option<PathBuf>,
    /// RNG seed (overrides the scenario's); the same seed and request give the same reply.
    #[arg(long)]
    seed: Option<u64>,
    /// Tokio worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Largest request body accepted, in MiB.
    #[arg(long, default_value_t = 32)]
    max_body_mb: usize,
    /// Use this fixed `created` timestamp (unix seconds) so replays are byte-identical.
    #[arg(long)]
    fixed_created: Option<u64>,
    /// Allow listening on a non-loopback address.
    #[arg(long)]
    allow_remote: bool,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// C concurrent streams against the mock: timing error, chunks/s, CPU per chunk, RSS per stream.
    #[command(
        after_help = "Example (the issue's target):\n  plimsoll bench mock --streams 10000 --ttft-ms 200 --tok-ms 5 --tokens 50 --repeat 3"
    )]
    Mock(BenchMockArgs),
    /// The probe's cost: time to sample a SUT's process tree when it holds many OS threads.
    Probe {
        /// OS threads the sampled child holds.
        #[arg(long, default_value_t = 10_000)]
        threads: usize,
        #[arg(long, default_value_t = 200)]
        samples: usize,
    },
    /// (internal) Hold N idle threads until killed; the target of `bench probe`.
    #[command(hide = true)]
    HoldThreads {
        #[arg(long)]
        threads: usize,
    },
}

#[derive(Args)]
struct BenchMockArgs {
    /// Concurrent open streams (closed loop: each stream starts a new request when one ends).
    #[arg(long, default_value_t = 1000)]
    streams: usize,
    #[arg(long, default_value_t = 200.0)]
    ttft_ms: f64,
    #[arg(long, default_value_t = 5.0)]
    tok_ms: f64,
    /// Output tokens per reply.
    #[arg(long, default_value_t = 50)]
    tokens: u32,
    #[arg(long, default_value_t = 1)]
    tokens_per_chunk: u32,
    /// chat, responses or messages.
    #[arg(long, default_value = "chat")]
    api: String,
    /// Seconds of load before measuring.
    #[arg(long, default_value_t = 2.0)]
    warmup_s: f64,
    /// Seconds measured per run.
    #[arg(long, default_value_t = 5.0)]
    window_s: f64,
    /// Runs, each with a fresh mock process; the table shows each run and the median.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Tokio worker threads of the mock.
    #[arg(long)]
    mock_workers: Option<usize>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Mock(a) => mock_cmd(a),
        Command::Run(a) => {
            let opts = ramp::StepOptions {
                concurrency: a.concurrency,
                allow_remote: a.allow_remote,
                progress: !a.json,
                harness: a.harness,
                rate: a.rate,
                cap: match (a.cpus, &a.mem) {
                    (None, None) => None,
                    (cpus, mem) => match cap_spec(cpus, mem.as_deref()) {
                        Ok(c) => Some(c),
                        Err(e) => return fail(e),
                    },
                },
            };
            match ramp::cli::run(&a.config, opts, a.json) {
                Ok(code) => return ExitCode::from(code),
                Err(e) => Err(e),
            }
        }
        Command::Floor(a) => floor_cmd(a),
        Command::Ramp(a) => ramp_cmd(a),
        Command::Demo(a) => demo_cmd(a),
        Command::Compare(a) => match compare_cmd(a) {
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
        Command::History { db, limit } => history_cmd(&db, limit),
        Command::Report { run, db, out } => {
            ramp::ladder::report_from_history(&db, run, out.as_deref()).map(|_| ())
        }
        Command::Bench(BenchCommand::Mock(a)) => bench_mock_cmd(a),
        Command::Bench(BenchCommand::Probe { threads, samples }) => std::env::current_exe()
            .map_err(anyhow::Error::from)
            .and_then(|exe| bench::run_probe_bench(&exe, threads, samples.max(1))),
        Command::Bench(BenchCommand::HoldThreads { threads }) => bench::hold_threads(threads),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("plimsoll: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn mock_cmd(a: MockArgs) -> anyhow::Result<()> {
    let mut scenario = match &a.scenario {
        Some(p) => mock::Scenario::load(p)?,
        None => mock::Scenario::default(),
    };
    scenario
        .apply_failure_env(|k| std::env::var(k).ok())
        .map_err(anyhow::Error::msg)?;
    let opts = mock::MockOptions {
        listen: a.listen,
        scenario,
        seed: a.seed,
        max_body_bytes: a.max_body_mb.max(1) << 20,
        fixed_created: a.fixed_created,
    };
    mock::run::run(opts, a.workers, a.allow_remote)
}

fn fail(e: String) -> ExitCode {
    eprintln!("plimsoll: error: {e}");
    ExitCode::from(1)
}

fn cap_spec(cpus: Option<f64>, mem: Option<&str>) -> Result<ramp::cap::CapSpec, String> {
    let d = ramp::cap::CapSpec::default();
    let cpus = cpus.unwrap_or(d.cpus);
    if cpus.is_nan() || cpus <= 0.0 {
        return Err(format!("--cpus {cpus}: must be more than 0"));
    }
    Ok(ramp::cap::CapSpec {
        cpus,
        mem_bytes: mem
            .map(ramp::cap::parse_mem)
            .transpose()?
            .unwrap_or(d.mem_bytes),
    })
}

fn ramp_cmd(a: RampArgs) -> anyhow::Result<()> {
    let cfg = ramp::Config::load(&a.config)?;
    let levels =
        ramp::ladder::parse_levels(&a.ladder, cfg.concurrency).map_err(anyhow::Error::msg)?;
    let cap = if a.no_cap {
        None
    } else {
        Some(cap_spec(Some(a.cpus), Some(&a.mem)).map_err(anyhow::Error::msg)?)
    };
    let opts = ramp::ladder::RampOptions {
        step: ramp::StepOptions {
            allow_remote: a.allow_remote,
            progress: false,
            cap,
            ..Default::default()
        },
        host: a
            .host
            .as_deref()
            .map(ramp::ladder::parse_host)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        target: a.target,
        out: a.out,
        history: (!a.no_history).then_some(a.history),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let doc = rt.block_on(ramp::ladder::run_ladder(&cfg, levels, &opts))?;
    println!("{}", serde_json::to_string(&doc)?);
    Ok(())
}

fn compare_cmd(a: CompareArgs) -> anyhow::Result<u8> {
    let cfg = ramp::Config::load(&a.config)?;
    let levels = match ramp::ladder::parse_levels(&a.ladder, 1).map_err(anyhow::Error::msg)? {
        ramp::ladder::Levels::List(v) => v,
        ramp::ladder::Levels::Auto { .. } => {
            anyhow::bail!("--ladder auto is for ramp; compare needs fixed levels, e.g. 10,20")
        }
    };
    let cap = if a.no_cap {
        None
    } else {
        Some(cap_spec(Some(a.cpus), Some(&a.mem)).map_err(anyhow::Error::msg)?)
    };
    let fail_on = ramp::compare::parse_fail_on(&a.fail_on).map_err(anyhow::Error::msg)?;
    let step = ramp::StepOptions {
        cap,
        ..Default::default()
    };
    // Git refs: a worktree per ref, built, removed afterwards (the guards' Drop).
    let (worktrees, base_cmd, branch_cmd) = match (&a.base, &a.branch, &a.base_cmd, &a.branch_cmd) {
        (Some(b), Some(r), None, None) => {
            let wt = ramp::compare::Worktrees::create(&cfg.cwd, b, r, a.build.as_deref())?;
            let cmd = shell_join(&cfg.command);
            (Some(wt), cmd.clone(), cmd)
        }
        (None, None, Some(b), Some(r)) => (None, b.clone(), r.clone()),
        _ => anyhow::bail!("give --base-cmd and --branch-cmd, or --base and --branch (git refs)"),
    };
    let opts = ramp::compare::CompareOptions {
        base_cmd,
        branch_cmd,
        levels,
        repeat: a.repeat,
        step,
        fail_on,
        history: (!a.no_history).then_some(a.history.clone()),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (doc, breaches) =
        rt.block_on(ramp::compare::run_compare(&cfg, &opts, worktrees.as_ref()))?;
    drop(worktrees);
    let md = ramp::compare::markdown(&doc);
    eprintln!("{md}");
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)?;
        std::fs::write(
            dir.join("compare.json"),
            serde_json::to_string_pretty(&doc)?,
        )?;
        std::fs::write(dir.join("compare.md"), &md)?;
        std::fs::write(dir.join("compare.html"), ramp::html::render_compare(&doc))?;
    }
    println!("{doc}");
    for b in &breaches {
        eprintln!("FAIL: {b}");
    }
    Ok(if breaches.is_empty() { 0 } else { 2 })
}

fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn history_cmd(db: &std::path::Path, limit: usize) -> anyhow::Result<()> {
    if !db.exists() {
        anyhow::bail!(
            "no history at {}; `plimsoll ramp` records one there",
            db.display()
        );
    }
    let h = store::History::open(db)?;
    println!(
        "{:>5}  {:<20}  {:<13}  {:>5}  {:>8}  config",
        "run", "started", "status", "steps", "ceiling"
    );
    for r in h.runs(limit)? {
        let ceiling = r.ceiling.map_or("—".to_string(), |c| c.to_string());
        println!(
            "{:>5}  {:<20}  {:<13}  {:>5}  {:>8}  {}",
            r.id, r.started, r.status, r.steps, ceiling, r.config
        );
    }
    Ok(())
}

fn demo_cmd(a: DemoArgs) -> anyhow::Result<()> {
    let levels = ramp::ladder::parse_levels(&a.ladder, 16).map_err(anyhow::Error::msg)?;
    let cap = (!a.no_cap).then(ramp::cap::CapSpec::default);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(ramp::demo::run_demo(a.out, levels, cap))?;
    Ok(())
}

fn floor_cmd(a: FloorArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(floor::serve(
        a.listen,
        &a.provider,
        &a.model,
        a.thread_per_session,
    ))
}

fn bench_mock_cmd(a: BenchMockArgs) -> anyhow::Result<()> {
    let opts = bench::MockBenchOptions {
        streams: a.streams,
        ttft_ms: a.ttft_ms,
        tok_ms: a.tok_ms,
        tokens: a.tokens,
        tokens_per_chunk: a.tokens_per_chunk,
        api: a.api,
        warmup: std::time::Duration::from_secs_f64(a.warmup_s.max(0.1)),
        window: std::time::Duration::from_secs_f64(a.window_s.max(0.5)),
        repeat: a.repeat,
        mock_workers: a.mock_workers,
        exe: std::env::current_exe().context("locating the plimsoll executable")?,
    };
    bench::print_mock_bench(&opts, a.json)
}
