//! A provider that pushes back under load: what its limits are set to (`limits.rs`),
//! the per-key quota buckets (`quota.rs`), the generation slots and their queue
//! (`capacity.rs`), and the limits in force with what they did (`state.rs`).
//!
//! It knows nothing of HTTP or of any API: the 429s and 529/503s and their headers are
//! written by the server (`serve/errors.rs`, `serve/headers.rs`) in each API's dialect.

pub mod capacity;
pub mod limits;
pub mod quota;
pub mod state;

pub use self::state::{Held, Pushback, Scopes, PROVIDER};
