//! The `plimsoll` command line: parses arguments and hands each subcommand to the
//! crate that owns it. No logic lives here.

mod cmd;
mod openapi;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "plimsoll",
    version,
    about = "Find the load line of an LLM-agent system: how many concurrent sessions it holds on a small box.",
    after_help = "Examples:\n  plimsoll mock                          serve a synthetic LLM on 127.0.0.1:8700\n  plimsoll mock --scenario scenarios/chat.toml --seed 7\n  plimsoll bench mock --streams 1000     measure the mock's own timing accuracy and cost\n  plimsoll bench mock --mcp              MCP tool calls/s the mock serves and its CPU per call"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a synthetic LLM provider (OpenAI Chat Completions and Responses, Anthropic Messages).
    #[command(
        after_help = "Point your system at it:\n  OPENAI_BASE_URL=http://127.0.0.1:8700/v1  ANTHROPIC_BASE_URL=http://127.0.0.1:8700\n\nExample:\n  plimsoll mock --listen 127.0.0.1:8700 &\n  curl -s http://127.0.0.1:8700/v1/chat/completions -H 'content-type: application/json' \\\n    -d '{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'\n\nThe first line on stdout is `listening http://ADDR` (useful with --listen 127.0.0.1:0).\n\nOther endpoints:\n  GET  /plimsoll/timing          how late frames left against their deadlines\n  GET  /plimsoll/ledger          per-session calls, tokens, injected failures, retries, integrity violations\n  GET  /metrics                  the same counters for Prometheus\n  POST /plimsoll/admin/failures  change failure rates live: {\"model\":\"*\",\"rate_limit\":0.3} ({\"reset\":true} undoes)\n  POST /v1/audio/speech          text to speech: the voice, as long as its text takes ([audio] chars_per_s), pcm or wav, raw or SSE\n  POST /v1/audio/transcriptions  speech to text: the words the voice carries, json/text/verbose_json or streamed\n  GET  /v1/realtime?model=…      the Realtime API (WebSocket): server VAD, responses that speak, function calls\n\nEnvironment: PLIMSOLL_FAIL_RATE_LIMIT, _SERVER_ERROR, _OVERLOADED, _RESET, _CUT, _STALL, _SPIKE (rates 0..1),\n_RETRY_AFTER_MS, _STALL_MS, _SPIKE_MS set failures for every model, over the scenario's."
    )]
    Mock(cmd::mock::MockArgs),
    /// Serve the mock's MCP tools over stdio, for agents that start a tool server per session.
    #[command(
        after_help = "Examples:\n  plimsoll mcp --stdio                          relay to the mock in $PLIMSOLL_MOCK_URL (set in every step)\n  plimsoll mcp --stdio --scenario scenarios/mcp.toml   serve the scenario's [mcp] tools in this process\n  plimsoll mcp --stdio --ballast-mb 14          weigh what a real server would\n\nOne JSON-RPC message per line on stdin, one per line on stdout (both eras of MCP: server/discover and stateless requests of 2026-07-28, or initialize and a session). Over HTTP, `plimsoll mock` serves the same tools at /mcp."
    )]
    Mcp(cmd::mcp::McpArgs),
    /// Write a commented plimsoll.toml and session.toml for your system (never over existing files).
    #[command(
        after_help = "Examples:\n  plimsoll init --command 'python app.py --port {{port}}' --url '{{base}}/chat'\n  plimsoll init --openai --command 'litellm --config config.yaml --port {{port}}' --ready-path /health/liveliness\n  plimsoll init --form --command 'python app.py' --url '{{base}}/agents/assistant/runs'\n  plimsoll init --command 'python app.py' --from-openapi http://127.0.0.1:8000/openapi.json --operation create_agent_run\n\nA gateway that wants a key (LiteLLM's master key): set it under [sut] env and send it under [headers] authorization.\n\nThen `plimsoll check`, then `plimsoll ramp --cpus 1`."
    )]
    Init(cmd::init::InitArgs),
    /// Two sessions side by side (a conversation id shared by both caught before any ramp), every failure explained in plain words (exit 3 when something needs fixing).
    Check(cmd::check::CheckArgs),
    /// Print the price table Plimsoll prices LLM calls with (dated; per model and 1M tokens), to copy and edit.
    #[command(after_help = "Example:
  plimsoll prices > prices.toml      then in plimsoll.toml:  [cost] prices = \"prices.toml\"

Every RESULT's `cost` says what the step's LLM calls cost at these prices: per turn, per session, per 1,000 sessions, by kind of token, and with perfect caching.")]
    Prices,
    /// Print the JSON Schema of a config file (plimsoll, session, bus, scenario), made from the types that read it, for editors and CI.
    #[command(after_help = "Examples:
  plimsoll schema session > session.schema.json
  plimsoll schema --out .plimsoll/schemas      every schema, as NAME.schema.json
  plimsoll schema --reference                  every key, as Markdown (docs/config.md)

Editors built on Taplo (VS Code's Even Better TOML, Zed, Helix) complete, document and check keys from a schema named on the file's first line:
  #:schema ./.plimsoll/schemas/session.schema.json
`plimsoll init` writes that line and the schemas.")]
    Schema(cmd::schema::SchemaArgs),
    /// Run one step: start the SUT fresh against the mock, drive C sessions, print one RESULT line.
    #[command(
        after_help = "Examples:\n  plimsoll run --config examples/floor/plimsoll.toml --concurrency 50\n  cd examples/livekit-agent && plimsoll run -c 4 --budget rss_mb=4096   4 calls a worker within 4 GB? said first\n\nThe last stdout line is `RESULT {json}` (schema: schemas/result.v1.json); a verdict goes to stderr.\n\nExit codes:\n  0  ok\n  1  Plimsoll's own error (bad config, SUT would not start)\n  2  a threshold from the config (p99_session_ms, peak_rss_mb) or a --budget was crossed\n  3  sessions failed, integrity violations, or the SUT collapsed (crash, OOM kill, timeout)\n  4  harness-bound: Plimsoll, not the SUT, was the bottleneck\n  130 interrupted (Ctrl-C); the SUT was stopped\nWhen several apply, the first in the order 3, 2, 4 wins."
    )]
    Run(cmd::run::RunArgs),
    /// Ramp: one fresh step per level under a resource cap until the first collapse; ceiling, knee, USL, capacity.
    #[command(
        after_help = "Examples:\n  cd examples/cpu-bound && plimsoll ramp --cpus 1          auto ladder: double, then bisect to the line\n  plimsoll ramp --config plimsoll.toml --ladder 10,20,40,80 --budget 'latency_inflation=3,p99_turn_ms=800'\n  plimsoll ramp --host 64GB,16cpu --target 100000 --out ramp-out\n\nEach row is printed on stderr as its step finishes (budget: holds / over / collapsed); the verdict follows: how many sessions the SUT holds within budget, from where it is over budget, its wall (CPU, memory, the harness, or a limit inside it) and any collapse. --out writes result.json, report.md and report.html; --json prints the document on stdout (stdout carries nothing else: `2> ramp.txt` keeps the table and the verdict); every run goes into .plimsoll/history.db (plimsoll history, plimsoll report RUN).\nWith two or more cores Plimsoll runs on its own core and the SUT on the rest (--no-partition to share)."
    )]
    Ramp(cmd::ramp::RampArgs),
    /// Soak: one SUT under steady load for a long time (sessions replaced as they end), then a drain; a leak verdict per resource.
    #[command(
        after_help = "Examples:\n  plimsoll soak -c 8 --duration 30m --drain 5m --out soak-out\n  plimsoll soak --rate 20 --duration 2h --every 5s\n\nThe SUT's RSS, threads, open files, CPU and cgroup memory are sampled into the history as the soak goes (Ctrl-C keeps the series and judges it). The verdict per resource is leak / no leak / unknown, from the load phase after the warm-up: Mann–Kendall and Sen's slope on block minima (a sawtooth is not a leak), an OLS slope with its 95 % interval, a growth floor that matters; slopes per hour and per 1,000 sessions, and how much the drain gave back. Give the session a [[teardown]] so each session ends cleanly in the SUT.\nExit codes: 0 no leak, 2 a leak, 3 the soak's step failed, 1 Plimsoll's own error."
    )]
    Soak(cmd::soak::SoakArgs),
    /// The whole job with nothing to set up: ramp the built-in floor agent and write the reports.
    #[command(
        after_help = "Examples:\n  plimsoll demo                          auto ladder, 1-core cap; reports in ./plimsoll-demo\n  plimsoll demo --cpus 0.5               half a core of quota on one core: throttled\n  plimsoll demo --cpus 1 --cpu-by quota  a quota over every core, as docker --cpus"
    )]
    Demo(cmd::demo::DemoArgs),
    /// Compare two builds of the SUT on the same ladder, interleaved and repeated, with statistics.
    #[command(
        after_help = "Examples:\n  plimsoll compare --config plimsoll.toml --base-cmd './agent-old' --branch-cmd './agent-new' --ladder 10,20 --repeat 6\n  plimsoll compare --config plimsoll.toml --base main --branch my-branch --build 'cargo build --release' --fail-on 'p99_session_ms>+10%,peak_threads>+0'\n\nWith --base/--branch (git refs of the SUT's repository, the config's [sut] cwd) each ref is checked out in its own worktree, built with --build, run with the config's [sut] command there, and the worktrees are removed afterwards.\nExit codes: 0 done, 1 Plimsoll's own error, 2 a --fail-on gate was crossed (the rows are printed)."
    )]
    Compare(cmd::compare::CompareArgs),
    /// Merge the shards of one step (`plimsoll run --shard I/N`) into one RESULT: histograms added exactly, one verdict.
    #[command(
        after_help = "Example (four shards on this machine, against a SUT and a mock already running):\n  AT=$(( $(date +%s) + 5 ))\n  for i in 0 1 2 3; do plimsoll run --target http://127.0.0.1:8080 --mock http://127.0.0.1:8700 --shard $i/4 --start-at $AT & done; wait\n  plimsoll merge plimsoll-shards\n\nThe outcome is \"unknown\" (exit 5), with no latency or rate, when a shard is missing, ran twice, began more than --late-tolerance-ms after the shared start, or was harness-bound.\nExit codes: 0 ok, 1 Plimsoll's own error (unreadable files), 2 a threshold crossed, 3 sessions failed or integrity violations, 5 unknown."
    )]
    Merge(cmd::merge::MergeArgs),
    /// Render the Kubernetes manifests of a sharded run: the shared mock, an Indexed Job of driver shards, a merge Job.
    #[command(
        after_help = "Example:\n  plimsoll k8s --shards 8 --target http://agent.default.svc:8080 --image registry.example/plimsoll:0.1 -c 2000 -o run.yaml\n  kubectl apply -f run.yaml && kubectl logs -f job/plimsoll-RUN-merge\n\nThe shards meet at the mock (a barrier) and start together, send their files to it, and the merge Job prints one RESULT (\"unknown\" when a shard is missing, ran twice, began late or was harness-bound). The Job has backoffLimit 0 and podReplacementPolicy Failed: a failed shard is not run again."
    )]
    K8s(cmd::k8s::K8sArgs),
    /// List the recorded runs (ramps and soaks).
    History {
        /// The history database.
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
        /// The history database.
        #[arg(long, default_value = ".plimsoll/history.db")]
        db: PathBuf,
        /// Directory to write result.json, report.md and report.html into (without it: the table and verdict on the terminal).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Serve the floor reference agent: a bare tool loop against OPENAI_BASE_URL (what any agent costs at least).
    Floor(cmd::floor::FloorArgs),
    /// (internal) The watchdog: cleans up after a Plimsoll that was killed.
    #[command(hide = true, name = "__watchdog")]
    Watchdog,
    /// Benchmarks of Plimsoll's own parts.
    #[command(subcommand)]
    Bench(cmd::bench::BenchCommand),
    /// Load shaped like production: a workload from your agent's OpenTelemetry traces or conversation logs, to replay with run and ramp.
    #[command(subcommand, after_help = WORKLOAD_HELP)]
    Workload(cmd::workload::WorkloadCommand),
}

const WORKLOAD_HELP: &str = "From \"my agent emits OpenTelemetry\" to a ramp:
  1. Export your agent's spans as OTLP JSON: the collector's file exporter
     (exporters: file: path: traces.jsonl), or in Python the SDK's
     opentelemetry-exporter-otlp-json-file (FileSpanExporter). The GenAI conventions are
     what is read: gen_ai.operation.name (invoke_agent, chat, execute_tool),
     gen_ai.conversation.id, gen_ai.usage.input_tokens / output_tokens,
     gen_ai.request.model, gen_ai.tool.name. Or write JSONL conversations:
     {\"session\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"…\", \"timestamp\": 1767225600.5}, …]}
  2. plimsoll workload from-traces traces.jsonl -o workload.json
     (prints the distributions: turns per session, calls per turn, tokens, tool and think time)
  3. In plimsoll.toml:  [workload]  file = \"workload.json\"   (or --workload on run/ramp)
     and put {{prompt}} in the session's user message: the recorded size of each turn's
     message, as filler (--prompts recorded sends recorded text where there is some).
  4. plimsoll run --replay exact --speed 1      every recorded session once, at its recorded start
     plimsoll run -c 40                          sampled: 40 sessions drawn with the seed
     plimsoll ramp --cpus 1                      a ladder of sampled replays
The mock answers each session's calls as recorded (output lengths, the tools asked for,
in order); sessions send their turns with the recorded think times. RESULT carries the
workload's fingerprint and how faithfully the system followed the recording.

Example: examples/openai-agent/traces (a real trace of the openai-agent example).";

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Mock(a) => cmd::mock::run(a),
        Command::Mcp(a) => cmd::mcp::run(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Init(a) => cmd::init::init(a),
        Command::Check(a) => cmd::check::check(a),
        Command::Prices => cmd::prices::run(),
        Command::Schema(a) => cmd::schema::run(a),
        Command::Floor(a) => cmd::floor::run(a),
        Command::Ramp(a) => cmd::ramp::run(a),
        Command::Soak(a) => cmd::soak::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::K8s(a) => cmd::k8s::run(a),
        Command::History { db, limit } => cmd::history::list(&db, limit),
        Command::Report { run, db, out } => cmd::history::report(&db, run, out.as_deref()),
        Command::Bench(c) => cmd::bench::run(c),
        Command::Workload(c) => cmd::workload::run(c),
        Command::Watchdog => {
            guard::watch(std::io::stdin().lock());
            Ok(0)
        }
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("plimsoll: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every flag and argument of every command a user can see, named by its path.
    fn undocumented(c: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in c.get_arguments() {
            let shown = !a.is_hide_set() && !["help", "version"].contains(&a.get_id().as_str());
            if shown && a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path} --{}", a.get_id()));
            }
        }
        for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
            undocumented(s, &format!("{path} {}", s.get_name()), out);
        }
    }

    #[test]
    fn every_flag_a_user_can_see_says_what_it_does() {
        let mut missing = Vec::new();
        undocumented(&Cli::command(), "plimsoll", &mut missing);
        assert!(missing.is_empty(), "flags without help: {missing:?}");
    }
}
