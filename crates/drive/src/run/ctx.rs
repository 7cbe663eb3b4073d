//! What every request of a session shares, whichever runner or caller sends it.

use super::options::Owner;
use super::Recorder;

/// What every request of a session shares: where it is recorded, whether it may leave
/// loopback, how long a reply may take, and who said a text (for a call's words check).
pub(crate) struct Ctx<'a> {
    pub recorder: &'a Recorder,
    pub allow_remote: bool,
    pub timeout_ms: u64,
    /// Who said a text (the mock's ledger), for a voice call's words check.
    pub voice_owner: Option<&'a Owner>,
}
