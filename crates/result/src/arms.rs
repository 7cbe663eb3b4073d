//! Arms side by side (`[[arm]]`, `--replicas`): each variant's ladder document, and how
//! throughput scaled over replicas. Types only.

use crate::environment::Environment;
use crate::ladder::LadderDoc;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ArmsDoc {
    pub schema_version: u32,
    pub config: String,
    /// The first arm's (every arm ran on the same machine under the same cap).
    pub environment: Option<Environment>,
    pub interrupted: bool,
    pub arms: Vec<LadderDoc>,
    pub scaling: Vec<Scaling>,
}

/// One variant at one replica count: its peak throughput, and how much of N times one
/// instance's that is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scaling {
    pub variant: String,
    pub replicas: usize,
    pub peak_turns_per_s: f64,
    /// Throughput at N ÷ (N ÷ N₀ × throughput at N₀), N₀ the fewest replicas measured
    /// (1 when measured): 1.0 is linear. None when N₀ found no wall within the ladder
    /// (its peak is the ladder's, and so would the ratio be).
    pub efficiency: Option<f64>,
    /// The fewest replicas, when they found no wall.
    #[serde(default)]
    pub unwalled_base: Option<usize>,
    pub rss_mb_per_instance: f64,
}
