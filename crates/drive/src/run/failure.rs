//! How a failure is named: its kind, the key it is counted under in `errors_by_kind`
//! (`connect`, `timeout`, `protocol`, `closed`, `config`, `status_503`, `check_failed`,
//! `extract_failed`, `lost`, `teardown_…`), and a message for the terminal. Deciding
//! what failed is the runners' business; this is only the shape they report it in.

/// A failure's kind and message.
pub type Failure = (String, String);
