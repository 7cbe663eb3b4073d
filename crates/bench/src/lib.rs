//! Benchmarks of Plimsoll's own parts, as commands that print numbers: how closely the
//! mock keeps the timing it is asked for and what that costs, how many MCP tool calls it
//! serves and at what cost, what the probe pays for one sample of a process tree
//! with many threads, and how many voice calls one harness core paces in real time.
//!
//! `plimsoll bench mock` (`mock_bench`) starts the mock as a separate process (so its
//! CPU and memory are its own), opens C concurrent streaming requests against it over
//! loopback in a closed loop, and reports how closely the achieved timing follows the
//! requested one, the chunk rate, the mock's CPU per chunk and per request (with a long
//! shared system prompt and the prompt cache on or off, what caching costs the mock) and
//! its memory per open stream (`mock_requests` writes the requests: bare questions, or an
//! agent's history of tool calls with `--history`); with `--burst` (`burst_bench`) each
//! stream is one request on a new connection, all started over a few seconds, with the
//! client's own CPU beside the mock's (both report `timing_errors`); `report` prints its
//! table (machine fingerprint, each run, the median) or JSON. `plimsoll bench mock --mcp`
//! (`mcp_bench`) puts MCP clients of either era on the mock's `/mcp` instead and reports
//! the calls a second it serves, their latency and its CPU per call (`mcp_requests`
//! writes the messages). `plimsoll bench mock --audio` (`audio_bench`) streams speech in
//! real time from a mock held to one core and finds how many streams it keeps on time.
//! All start the mock with `mock_process`. `plimsoll bench calls` (`calls_bench`) drives
//! voice calls against a bot that costs nothing (`echo_bot` over Twilio, `webrtc_bot` over
//! WebRTC) and finds how many one
//! harness core keeps in real time. `plimsoll bench driver` (`driver_bench`) drives HTTP
//! sessions against a null SUT and reports the driver's CPU a turn. `plimsoll bench probe`
//! (`probe_bench`) times samples of a child holding N idle threads and prints its own
//! table. It owns no production code path.

mod audio_bench;
mod bot_thread;
mod burst_bench;
mod calls_bench;
mod calls_cpu;
mod calls_report;
mod driver_bench;
mod echo_bot;
mod mcp_bench;
mod mcp_requests;
mod mock_bench;
mod mock_process;
mod mock_requests;
mod probe_bench;
mod procfs;
mod report;
mod timing_errors;
mod webrtc_bot;

pub use audio_bench::{run_audio_bench, AudioBenchOptions, AudioBenchRow};
pub use burst_bench::{run_burst_bench, BurstResult};
pub use calls_bench::{run_calls_bench, CallsBenchOptions, CallsBenchRow, Transport};
pub use calls_cpu::Split;
pub use calls_report::print_calls_bench;
pub use driver_bench::{run_driver_bench, serve_null_sut, DriverBenchOptions, DriverBenchRow};
pub use mcp_bench::{run_mcp_bench, McpBenchOptions, McpBenchRow};
pub use mcp_requests::{Era, Reply, Tool};
pub use mock::run::raise_nofile_limit;
pub use mock_bench::{run_mock_bench, MockBenchOptions, MockBenchResult};
pub use mock_process::partition_client_and_mock;
pub use probe::machine::fingerprint;
pub use probe_bench::{hold_threads, run_probe_bench, Held};
pub use report::{
    print_audio_bench, print_burst_bench, print_driver_bench, print_mcp_bench, print_mock_bench,
};
pub use timing_errors::TimingErrors;
