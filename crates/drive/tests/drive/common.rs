//! What the driver's tests share: the options of a plain closed-model run.

use drive::DriveOptions;
use std::time::Duration;

/// C sessions against `base`, seed 1, a 20 s step, loopback only.
pub fn options(base: String, c: usize) -> DriveOptions {
    DriveOptions {
        replicas: Vec::new(),
        concurrency: c,
        base,
        seed: 1,
        step_timeout: Duration::from_secs(20),
        allow_remote: false,
        arrival_rate: None,
        resident: None,
        on_resident: None,
        churn: None,
        shard: None,
        start_at: None,
        name_prefix: String::new(),
        replay: None,
        voice_owner: None,
        keep_audio: None,
        services: Vec::new(),
        slow: None,
    }
}
