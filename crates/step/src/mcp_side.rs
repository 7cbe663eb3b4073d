//! The tool hop of a step: RESULT's `mcp` from what the mock's MCP server counted (its
//! ledger's `mcp`), and what the SUT's stdio MCP servers cost — a sampler of their own
//! over the processes of the SUT's tree that are stdio servers: those that relayed
//! calls to the mock (it knows their pids) and any `plimsoll mcp --stdio` not yet heard
//! from. Their RSS is part of the SUT's; this says how much of it they are.

use mock::mcp::summary::McpSummary;
use probe::sampler::Pids;
use probe::Sampler;
use result::round2;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// RESULT's `mcp` (without `stdio`) from the ledger's.
pub(crate) fn from_ledger(s: &McpSummary) -> result::Mcp {
    let traced: u64 = s.sessions.values().map(|x| x.calls).sum();
    result::Mcp {
        calls: s.calls,
        calls_per_session: round2(traced as f64 / s.sessions.len().max(1) as f64),
        errors: s.errors,
        errors_by_kind: s.errors_by_kind.clone(),
        mcp_sessions: s.mcp_sessions,
        sessions_per_mcp_session: s.sessions_per_mcp_session,
        tools: s.tools.clone(),
        transports: s.transports.clone(),
        stdio: None,
    }
}

/// `plimsoll mcp --stdio`, by its command line.
fn is_plimsoll_stdio(pid: u32) -> bool {
    let argv = probe::tree::cmdline(pid);
    let exe = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a));
    exe == Some("plimsoll")
        && argv.get(1).map(String::as_str) == Some("mcp")
        && argv.iter().any(|a| a == "--stdio")
}

/// Samples the SUT's stdio MCP servers, when the scenario serves MCP tools.
pub(crate) fn watch_stdio(
    app: &Arc<mock::App>,
    tree: Pids,
    root: u32,
    every: Duration,
) -> Option<Sampler> {
    if app.mcp.spec.tools.is_empty() {
        return None;
    }
    let app = app.clone();
    let pids: Pids = Arc::new(move || {
        let known: HashSet<u32> = app.mcp.ledger.stdio_pids().into_iter().collect();
        tree()
            .into_iter()
            .filter(|p| known.contains(p) || is_plimsoll_stdio(*p))
            .collect()
    });
    Some(Sampler::start_on(root, pids, every))
}

/// What the stdio servers cost over the step (none when there were none).
pub(crate) fn stdio_figures(
    s: &probe::Summary,
    concurrency: usize,
    servers_seen: u64,
) -> Option<result::McpStdio> {
    (s.peak_processes > 0 || servers_seen > 0).then(|| result::McpStdio {
        peak_processes: s.peak_processes,
        processes_per_session: round2(s.peak_processes as f64 / concurrency.max(1) as f64),
        rss_mb_per_server: round2(s.peak_rss_kb as f64 / 1024.0 / s.peak_processes.max(1) as f64),
        peak_rss_mb: round2(s.peak_rss_kb as f64 / 1024.0),
        peak_threads: s.peak_threads,
        servers_seen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_servers_per_session_and_memory_per_server() {
        let s = probe::Summary {
            peak_processes: 8,
            peak_rss_kb: 8 * 14 * 1024,
            peak_threads: 16,
            ..Default::default()
        };
        let f = stdio_figures(&s, 8, 8).unwrap();
        assert_eq!(
            (f.processes_per_session, f.rss_mb_per_server, f.peak_rss_mb),
            (1.0, 14.0, 112.0)
        );
        assert!(stdio_figures(&probe::Summary::default(), 8, 0).is_none());
        assert!(
            !is_plimsoll_stdio(std::process::id()),
            "the test runner is no stdio server"
        );
    }
}
