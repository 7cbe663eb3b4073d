//! The phrases several walls share: a cap's size, a peer, a plateau, the CPU left.

use crate::pct;
use result::budget::num;
use result::wall::Flat;
use result::words::Unit;

/// A cap's size as an adjective: "1-core", "0.5-core"; the machine's without a cap.
pub fn cap_size(cores: Option<f64>) -> String {
    match cores {
        Some(c) => format!("{}-core", num(c)),
        None => "machine's".into(),
    }
}

/// A peer as the SUT's connections name it: "the provider (the mock)", "port 5432",
/// "redis".
pub fn who(peer: &str) -> String {
    match peer {
        "mock" => "the provider (the mock)".into(),
        p if p.starts_with(':') => format!("port {}", &p[1..]),
        p => p.to_string(),
    }
}

/// "flat at 32 turns/s from 40 sessions", with the peak where it stands out.
pub fn flat(f: &Flat, u: Unit) -> String {
    let peak = f.peak.map_or(String::new(), |(at, x)| {
        format!(" (peak {} at {})", num(x), num(at))
    });
    format!(
        "flat at {} turns/s{peak} from {}",
        num(f.turns_per_s),
        u.count(f.from)
    )
}

/// "CPU at most 52 % of its cap".
pub fn cpu_at_most(cpu: Option<f64>) -> String {
    match cpu {
        Some(c) => format!("CPU at most {} of its cap", pct(c)),
        None => "CPU not measured against a cap".into(),
    }
}
