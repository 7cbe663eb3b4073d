//! What a sweep (`ramp --sweep NAME=…`) or `run --set NAME=V` can move in a session
//! file, and moving it: turns, think time and body padding of a request/reply session,
//! messages, rate, connections, padding and settle time of a bus. Choosing the values
//! is `ramp`'s business.

use super::bus::{BusSpec, Count, Kind};
use super::session::SessionSpec;

/// What a sweep (`ramp --sweep NAME=…`) or `run --set NAME=V` can move in a session file.
pub const AXES: &[(&str, &str)] = &[
    ("turns", "turns a session"),
    ("think_ms", "the pause between a reply and the next turn"),
    ("messages", "a bus's messages per publisher"),
    (
        "rate",
        "a bus's messages a second per publisher (0: unpaced)",
    ),
    (
        "subscribers",
        "a bus's subscriber (or consumer) connections",
    ),
    ("publishers", "a bus's publisher connections"),
    (
        "pad",
        "the N of every {{pad N}} in request bodies or a bus's frames: the body size",
    ),
    (
        "settle_ms",
        "how long a bus's subscribers wait for stragglers",
    ),
];

impl SessionSpec {
    /// Sets one axis to `v`; says why when this session has no such thing.
    pub fn set(&mut self, name: &str, v: f64) -> Result<(), String> {
        let whole = |v: f64| {
            (v >= 0.0 && v.fract() == 0.0 && v <= u32::MAX as f64)
                .then_some(v as u64)
                .ok_or_else(|| format!("{name}={v}: a whole number ≥ 0 is needed"))
        };
        if let Some(bus) = self.bus.as_mut() {
            return bus.set(name, v, whole);
        }
        match name {
            "turns" => self.turns = whole(v)?.max(1) as u32,
            "pad" => {
                let n = whole(v)?;
                let mut found = false;
                for r in self
                    .setup
                    .iter_mut()
                    .chain(&mut self.turn)
                    .chain(&mut self.teardown)
                {
                    for b in &mut r.bodies {
                        found |= b.contains("{{pad");
                        *b = crate::template::with_pad(b, n);
                    }
                }
                if !found {
                    return Err("pad sets N in {{pad N}}; no request body has one".into());
                }
            }
            "think_ms" if v >= 0.0 => self.think_ms = v,
            "think_ms" => return Err(format!("think_ms={v}: must be ≥ 0")),
            other if AXES.iter().any(|(n, _)| *n == other) => {
                return Err(format!(
                    "{other} moves a bus ([[role]] tables); this session is request/reply"
                ))
            }
            other => return Err(unknown_axis(other)),
        }
        Ok(())
    }
}

/// The message for a name that is not an axis.
pub fn unknown_axis(name: &str) -> String {
    let known: Vec<&str> = AXES.iter().map(|(n, _)| *n).collect();
    format!(
        "{name:?} is not an axis; use concurrency or one of {}",
        known.join(", ")
    )
}

impl BusSpec {
    /// Sets one axis of a bus (see [`AXES`]).
    pub fn set(
        &mut self,
        name: &str,
        v: f64,
        whole: impl Fn(f64) -> Result<u64, String>,
    ) -> Result<(), String> {
        match name {
            "messages" => self.messages = whole(v)?.max(1) as u32,
            "rate" if v >= 0.0 => self.rate = v,
            "settle_ms" => self.settle_ms = whole(v)?,
            "subscribers" => self.set_count(Kind::Subscriber, whole(v)?.max(1) as usize)?,
            "publishers" => self.set_count(Kind::Publisher, whole(v)?.max(1) as usize)?,
            "pad" => {
                let n = whole(v)?;
                let pads = self.roles.iter().filter(|r| r.send.contains("{{pad")).count();
                if pads == 0 {
                    return Err("pad sets N in {{pad N}}; no publisher's send has one".into());
                }
                for r in &mut self.roles {
                    r.send = crate::template::with_pad(&r.send, n);
                }
            }
            "turns" | "think_ms" => {
                return Err(format!(
                    "{name} moves request/reply sessions; a bus has messages, rate, subscribers, publishers, pad"
                ))
            }
            "rate" => return Err(format!("rate={v}: must be ≥ 0")),
            other => return Err(unknown_axis(other)),
        }
        Ok(())
    }

    fn set_count(&mut self, kind: Kind, n: usize) -> Result<(), String> {
        let mut of_kind = self.roles.iter_mut().filter(|r| r.kind == kind);
        match (of_kind.next(), of_kind.next()) {
            (Some(r), None) => {
                r.count = Count::Fixed(n);
                Ok(())
            }
            _ => Err(format!(
                "the session has several {kind:?} roles; say which by giving each a count"
            )),
        }
    }
}
