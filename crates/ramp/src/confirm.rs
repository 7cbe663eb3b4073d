//! The line with its spread: once the auto ladder has found the levels either side of the
//! line, each runs again (`--confirm N` times, once by default) and a third time when its
//! runs disagree — a line is a draw from a noisy machine until it has been seen twice.

use crate::ladder::Run;
use result::Standing;

impl Run<'_> {
    /// Runs `holds` and `fails` again; false when interrupted.
    pub(crate) async fn confirm(
        &mut self,
        holds: usize,
        fails: usize,
        more: usize,
    ) -> anyhow::Result<bool> {
        if more == 0 {
            return Ok(true);
        }
        eprintln!(
            "confirming the line: {holds} and {fails} sessions again ({more} more run{} each, a third when they disagree)",
            if more == 1 { "" } else { "s" }
        );
        for level in [holds, fails] {
            let first = self.first_standing(level);
            let mut disagree = false;
            for _ in 0..more {
                let Some(st) = self.again(level).await? else {
                    return Ok(false);
                };
                disagree |= Some(st != Standing::Holds) != first.map(|f| f != Standing::Holds);
            }
            if disagree && more == 1 && self.again(level).await?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
