//! What a ladder says about the SUT's MCP tool servers: how their count and memory grow
//! with sessions. A stdio server per session is a process per session, and its memory
//! and threads with it — a cost that sets the line long before CPU does. The growth is
//! the least-squares slope of the servers alive at once against concurrency over the
//! steps that ran any, and the memory of one server their median RSS per server:
//! "1.0 MCP server process per session, 14 MB each". For the growth findings of a
//! ladder (`words::mcp` says it); pure.

use result::StepResult;

pub use result::mcp::StdioGrowth;

/// The growth of stdio MCP servers over `steps`, from the steps that ran any (one step
/// is enough: its count over its sessions); None when none did.
pub fn stdio_growth(steps: &[StepResult]) -> Option<StdioGrowth> {
    let pts: Vec<(f64, f64, f64)> = steps
        .iter()
        .filter_map(|s| {
            let st = s.mcp.as_ref()?.stdio.as_ref()?;
            (st.peak_processes > 0).then_some((
                s.concurrency as f64,
                st.peak_processes as f64,
                st.rss_mb_per_server,
            ))
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let per_session = if pts.len() == 1 {
        pts[0].1 / pts[0].0.max(1.0)
    } else {
        let n = pts.len() as f64;
        let (mx, my) = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        if sxx > 0.0 {
            sxy / sxx
        } else {
            my / mx.max(1.0)
        }
    };
    let mut mb: Vec<f64> = pts.iter().map(|p| p.2).collect();
    mb.sort_by(f64::total_cmp);
    Some(StdioGrowth {
        per_session: (per_session * 100.0).round() / 100.0,
        mb_each: mb[mb.len() / 2],
        steps: pts.len(),
        up_to: pts.iter().map(|p| p.0 as usize).max().unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::{Mcp, McpStdio};

    fn step(c: usize, procs: u32, mb: f64) -> StepResult {
        StepResult {
            concurrency: c,
            mcp: Some(Mcp {
                stdio: Some(McpStdio {
                    peak_processes: procs,
                    rss_mb_per_server: mb,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_server_per_session_is_named_with_its_memory() {
        let steps = [
            step(2, 2, 14.2),
            step(4, 4, 13.9),
            step(8, 8, 14.0),
            StepResult::default(),
        ];
        let g = stdio_growth(&steps).unwrap();
        assert_eq!(
            (g.per_session, g.mb_each, g.steps, g.up_to),
            (1.0, 14.0, 3, 8)
        );
        let pooled = stdio_growth(&[step(4, 2, 3.25), step(16, 2, 3.25)]).unwrap();
        assert_eq!(
            pooled.per_session, 0.0,
            "a fixed pool of servers does not grow"
        );
        assert_eq!(pooled.mb_each, 3.25);
        assert_eq!(stdio_growth(&[StepResult::default()]), None);
    }
}
