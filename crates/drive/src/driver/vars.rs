//! A session's values and what its requests share: the built-ins (its name, nonce and
//! uuid, the base URL and port of the replica it sticks to), then the names its replies
//! extract, and a new `{{request_uuid}}` per request — all fixed by the seed, so a run
//! replays. Filling templates with them is `template`'s business.

use crate::address::{replica, ws_base};
use crate::run::DriveOptions;
use crate::template::{nonce, uuid};

/// A session's values: built-ins, then extracted names as replies set them.
pub(super) struct Vars {
    pub values: Vec<(String, String)>,
    /// A slow consumer's reading pace, bytes a second.
    pub pace_bps: Option<f64>,
    seed: u64,
    index: u64,
    /// Requests sent so far: each gets its own `{{request_uuid}}`.
    pub requests: u64,
    /// A replayed workload and this session's index in it (see `pace`).
    pub replay: Option<(std::sync::Arc<workload::Replay>, usize)>,
}

impl Vars {
    /// A session's values; its `{{uuid}}`s are the step's own (`step`: the tag its
    /// session names carry), so a store that outlives the step never sees one twice.
    pub fn new(seed: u64, step: &str, index: usize, fixed: Vec<(String, String)>) -> Vars {
        let seed = step.bytes().fold(seed, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        });
        let mut values = fixed;
        values.push(("uuid".into(), uuid(seed, index as u64, 0)));
        Vars {
            values,
            pace_bps: None,
            seed,
            index: index as u64,
            requests: 0,
            replay: None,
        }
    }

    pub fn set(&mut self, name: String, value: String) {
        match self.values.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = value,
            None => self.values.push((name, value)),
        }
    }

    /// The user's words of `turn` (`{{prompt}}`): empty unless a workload is replayed.
    pub fn prompt(&self, turn: u32) -> String {
        match &self.replay {
            Some((r, i)) => r.prompt(*i, turn),
            None => String::new(),
        }
    }

    /// Fills a template for one request (`{{request_uuid}}` is new for each request).
    pub fn filler(&self, turn: u32) -> Vec<(String, String)> {
        let mut v = self.values.clone();
        v.push(("turn".into(), turn.to_string()));
        v.push(("prompt".into(), self.prompt(turn)));
        v.push((
            "request_uuid".into(),
            uuid(self.seed, self.index, self.requests),
        ));
        v
    }
}

/// A session's built-in values: its name, nonce, the SUT's base URL and port, and every
/// service's `NAME.port`.
/// With replicas, the one session `i` sticks to.
pub(super) fn fixed_vars(i: usize, opts: &DriveOptions, port: &str) -> Vec<(String, String)> {
    let (base, port) = replica(i, &opts.base, port, &opts.replicas);
    let mut fixed = vec![
        ("session".to_string(), format!("{}s{i}", opts.name_prefix)),
        ("nonce".into(), nonce(opts.seed, i)),
        ("ws_base".into(), ws_base(&base)),
        ("base".into(), base),
        ("port".into(), port),
    ];
    fixed.extend(service_vars(opts));
    fixed
}

/// Every service's `{{NAME.port}}`, as (name, value).
pub(super) fn service_vars(opts: &DriveOptions) -> Vec<(String, String)> {
    opts.services
        .iter()
        .map(|(name, port)| (format!("{name}.port"), port.to_string()))
        .collect()
}
