//! Pure functions over step documents: what a ladder of RESULTs says (ceiling, knee,
//! Universal Scalability Law fit, capacity projection) and what two builds' repeated
//! RESULTs say (medians, Mann–Whitney, bootstrap intervals, verdicts). No I/O, no
//! clocks, no printing: the same documents always give the same answer.

pub mod compare;
pub mod ladder;
pub mod scaling;
pub mod stats;

pub use scaling::{capacity, knee, usl, Capacity, Knee, Point, Usl};
