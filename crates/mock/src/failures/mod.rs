//! Failures injected on purpose: the rates a scenario (or a live admin change) sets and
//! the seeded draw of each request's fate (`rates.rs`), and failures by rule rather than
//! by draw (`script.rs`). The responses they turn into are the server's (`serve/errors.rs`).

pub mod rates;
pub mod script;

pub use self::rates::{Draw, Failures, Injected};
