//! The one error of placing and holding a call: its kind, and a line that names the fix.

/// What went wrong placing or holding a call, in one line that names the fix.
#[derive(Debug)]
pub struct CallError {
    /// A short kind: "signaling", "sdp", "ice", "dtls", "media", "timeout".
    pub kind: &'static str,
    pub message: String,
}

impl CallError {
    pub fn new(kind: &'static str, message: impl Into<String>) -> CallError {
        CallError {
            kind,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CallError {}
