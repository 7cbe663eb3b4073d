//! What a step found besides its RESULT, for the terminal and `plimsoll check`: why it
//! collapsed, the first error of each kind, the integrity violations the mock's
//! oracle named, whether the session marker reached the mock, the SUT's last lines.

use crate::step::StepResult;

#[derive(Debug, Clone, Default)]
pub struct StepReport {
    pub result: StepResult,
    /// Why the outcome is not ok.
    pub cause: Option<crate::cause::Cause>,
    /// The SUT's last output, digested, said under the cause of a crash.
    pub last_output: Option<String>,
    /// The first error of each kind: (kind, what it said).
    pub first_errors: Vec<(String, String)>,
    /// The SUT's own body that the first failure of each `status_…` kind quoted: what
    /// it said when it refused a request.
    pub first_bodies: std::collections::BTreeMap<String, String>,
    /// Sessions that failed in their `[[setup]]` requests, before any turn.
    pub sessions_failed_in_setup: u64,
    /// The first few integrity violations, as the mock's ledger gives them.
    pub violations: Vec<serde_json::Value>,
    /// Sessions whose marker reached the mock (0 with LLM calls: the marker got lost).
    pub marked_sessions: usize,
    /// The last lines the SUT printed over the step.
    pub log_lines: Vec<String>,
    /// The turns a session was asked to run (None in harness mode).
    pub turns_per_session: Option<u32>,
}
