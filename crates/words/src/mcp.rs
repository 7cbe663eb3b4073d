//! How a ladder's stdio MCP tool servers grew with its sessions, in words.

use result::mcp::StdioGrowth;

/// "1.0 MCP server process per session, 14 MB each (4 steps up to 32 sessions)".
pub fn growth(g: &StdioGrowth) -> String {
    let mb = match g.mb_each >= 10.0 {
        true => format!("{:.0}", g.mb_each),
        false => format!("{:.1}", g.mb_each),
    };
    format!(
        "{:.1} MCP server process per session, {mb} MB each ({} steps up to {} sessions)",
        g.per_session, g.steps, g.up_to
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growth_says_its_servers_and_their_memory() {
        let g = StdioGrowth {
            per_session: 1.0,
            mb_each: 14.0,
            steps: 3,
            up_to: 8,
        };
        assert_eq!(
            growth(&g),
            "1.0 MCP server process per session, 14 MB each (3 steps up to 8 sessions)"
        );
        let pooled = StdioGrowth {
            per_session: 0.0,
            mb_each: 3.25,
            ..g
        };
        assert!(growth(&pooled).starts_with("0.0 MCP server process per session, 3.2 MB each"));
    }
}
