//! The SUT's own log: each line of its stdout and stderr read for a level — Python
//! logging (`WARNING:name:…`, `%(levelname)s …`), Go log/slog (`level=WARN`, JSON),
//! Rust tracing (`… WARN target: …`), any JSON line with a `level`/`severity`/`levelname`
//! field — or matched against the user's pattern; warning and error lines grouped into
//! kinds (digits and ids masked, so `deadline exceeded with 9 runs` and `… with 12 runs`
//! are one kind) with a count and the first example; the last lines kept, bounded. A
//! Python traceback after an error line names the kind by its exception
//! (`ERROR: Exception in ASGI application → openai.RateLimitError: …`): the header alone
//! says nothing of what went wrong.
//!
//! `book` counts and groups the lines, `level` reads a line's level, `mask` hides what
//! varies, `worker` reads an agent worker's lines about its jobs (LiveKit Agents: marked
//! full at its load threshold, a job waiting for a process), `crash` puts a dead SUT's
//! cause first. Starting the SUT and capturing its output are `sut`'s business.

mod book;
pub mod crash;
mod level;
mod mask;
mod worker;

pub use book::{Kind, LogBook, KEEP};
pub use level::{level_of, Level};
pub use mask::mask;
pub use worker::WorkerBook;
