//! The tool hop in words and tables: a step's MCP calls, errors, sessions and slowest
//! tool, and its stdio servers' cost; a ladder's stdio servers per step, with their
//! growth ("1.0 MCP server process per session, 14 MB each"). MCP tools' latency joins
//! the named requests' table (`table::requests`) as `mcp NAME` rows.

use crate::grid::{Col, Grid};
use result::words::{count, count_f};
use result::StepResult;

/// A step's MCP lines (none when it called no MCP tool).
pub(crate) fn step_lines(r: &StepResult) -> Vec<String> {
    let Some(m) = &r.mcp else { return Vec::new() };
    let via: Vec<String> = m
        .transports
        .iter()
        .map(|(t, n)| format!("{n} over {t}"))
        .collect();
    let kinds: Vec<String> = m
        .errors_by_kind
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let sessions = if m.mcp_sessions == 0 {
        "stateless (2026-07-28: no MCP sessions)".to_string()
    } else {
        format!(
            "{}, {} each",
            count(m.mcp_sessions, "MCP session"),
            count_f(m.sessions_per_mcp_session, "agent session")
        )
    };
    let mut out = vec![format!(
        "  MCP: {} ({}; {} a session), {} failed{}; {sessions}",
        count(m.calls, "tool call"),
        via.join(", "),
        m.calls_per_session,
        m.errors,
        if kinds.is_empty() {
            String::new()
        } else {
            format!(" ({})", kinds.join(", "))
        },
    )];
    for (name, t) in &m.tools {
        out.push(format!(
            "    tool {name}: {}, p50/p99 {} / {} ms (max {}), {} failed",
            count(t.calls, "call"),
            t.p50_ms,
            t.p99_ms,
            t.max_ms,
            t.errors
        ));
    }
    if let Some(s) = &m.stdio {
        out.push(format!(
            "  MCP stdio servers: {} at once ({} per session), {} MB each ({} MB together), {}; {} served calls",
            s.peak_processes,
            s.processes_per_session,
            s.rss_mb_per_server,
            s.peak_rss_mb,
            count(s.peak_threads, "thread"),
            s.servers_seen
        ));
    }
    out
}

/// The stdio servers at every step that ran any, and their growth in words; None when
/// none did.
pub fn stdio_table(steps: &[StepResult]) -> Option<(Grid, String)> {
    let growth = analysis::mcp::stdio_growth(steps)?;
    let mut g = Grid::new(&[
        Col::right("sessions"),
        Col::right("stdio servers"),
        Col::right("per session"),
        Col::right("MB each"),
        Col::right("MB together"),
        Col::right("threads"),
    ]);
    for s in steps {
        if let Some(x) = s.mcp.as_ref().and_then(|m| m.stdio.as_ref()) {
            g.row(vec![
                s.concurrency.to_string().into(),
                x.peak_processes.to_string().into(),
                x.processes_per_session.to_string().into(),
                x.rss_mb_per_server.to_string().into(),
                x.peak_rss_mb.to_string().into(),
                x.peak_threads.to_string().into(),
            ]);
        }
    }
    Some((g, format!("Growth: {}.", words::mcp::growth(&growth))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::{Mcp, McpStdio, McpTool};

    #[test]
    fn a_step_says_its_calls_tools_and_servers() {
        let mut r = StepResult {
            concurrency: 4,
            ..Default::default()
        };
        assert!(step_lines(&r).is_empty());
        r.mcp = Some(Mcp {
            calls: 8,
            calls_per_session: 2.0,
            errors: 1,
            errors_by_kind: [("tool_error".to_string(), 1)].into(),
            mcp_sessions: 4,
            sessions_per_mcp_session: 1.0,
            tools: [(
                "kv_get".to_string(),
                McpTool {
                    calls: 4,
                    errors: 1,
                    p50_ms: 20.0,
                    p99_ms: 2000.0,
                    max_ms: 2100.0,
                },
            )]
            .into(),
            transports: [("stdio".to_string(), 8)].into(),
            stdio: Some(McpStdio {
                peak_processes: 4,
                processes_per_session: 1.0,
                rss_mb_per_server: 3.5,
                peak_rss_mb: 14.0,
                peak_threads: 8,
                servers_seen: 4,
            }),
        });
        let l = step_lines(&r);
        assert_eq!(l[0], "  MCP: 8 tool calls (8 over stdio; 2 a session), 1 failed (1 tool_error); 4 MCP sessions, 1 agent session each");
        assert_eq!(
            l[1],
            "    tool kv_get: 4 calls, p50/p99 20 / 2000 ms (max 2100), 1 failed"
        );
        assert!(
            l[2].starts_with("  MCP stdio servers: 4 at once (1 per session), 3.5 MB each"),
            "{}",
            l[2]
        );
        let (t, growth) = stdio_table(&[r]).unwrap();
        let t = t.markdown();
        assert!(t.contains("| 4 | 4 | 1 | 3.5 | 14 | 8 |"), "{t}");
        assert!(
            growth.starts_with("Growth: 1.0 MCP server process per session, 3.5 MB each"),
            "{growth}"
        );
    }
}
