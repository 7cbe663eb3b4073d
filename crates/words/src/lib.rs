//! Facts in words: the one place a verdict's typed facts become the sentences every
//! output shows.
//!
//! Pure functions of `result`'s facts (`result::facts`, the budget judged and what broke
//! it); each phrase written once, its known-answer test beside it.

pub mod budget;
pub mod capacity;
pub mod cause;
pub mod compare;
pub mod findings;
pub mod headline;
pub mod json;
pub mod mcp;
pub mod scaling;
pub mod soak;
pub mod sweep;
pub mod usl;
pub mod verdict;
pub mod wall;
pub mod worker;

/// A share in percent (0.93 → "93 %"): whole points, or a tenth of one below 1 % so that
/// a small share is not said as none ("0.3 %", "< 0.1 %").
pub fn pct(x: f64) -> String {
    let p = x * 100.0;
    match p {
        p if p > 0.0 && p < 0.05 => "< 0.1 %".into(),
        p if p > 0.0 && p < 0.95 => format!("{p:.1} %"),
        p => format!("{p:.0} %"),
    }
}
