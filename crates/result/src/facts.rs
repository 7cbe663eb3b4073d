//! A verdict's facts beside its line and its wall, typed with their figures: where one
//! call's own pace set a voice budget (`Paced`), what a session costs when even the first
//! level is over budget (`FirstCost`), what makes the reading less certain (`Note`), what
//! else the ladder shows (`Finding`).
//! `analysis` decides them, the `words` crate says them; nothing here is a sentence.
//! Runs recorded when these were sentences still read: `legacy` drops the sentences
//! (their words are in the verdict's recorded `lines`).

use crate::words::Unit;
use serde::{Deserialize, Serialize};

/// A voice budget the user left unset, judged from one call's own pace at the lowest
/// level instead of the default it was over (`analysis::pace`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Paced {
    /// The lowest level, whose calls set the pace.
    pub level: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<PacedResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<PacedStall>,
}

/// The response budget: the lowest level's own p95 times a factor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PacedResponse {
    pub factor: f64,
    pub own_p95_ms: f64,
}

/// The stall budget: the lowest level's own stall share and a margin above it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PacedStall {
    pub limit: f64,
    pub own: f64,
}

/// What a session costs at the first level, when even that level is over budget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FirstCost {
    pub level: usize,
    #[serde(default)]
    pub unit: Unit,
    /// The time a turn took beyond the mock's own, when it took longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_ms_per_turn: Option<f64>,
    /// Session time over the mock's own time.
    pub inflation: f64,
    /// The SUT's CPU per turn under load, where it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms_per_turn: Option<f64>,
    /// No `latency_vs_single` budget was set: the advice names it.
    #[serde(default)]
    pub advise_vs_single: bool,
}

/// What makes a verdict's reading less certain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// The SUT's CPU per turn varied by more than 30 % across levels: (level, ms) at the
    /// cheapest and the dearest.
    UnstableCost {
        low: (usize, f64),
        high: (usize, f64),
    },
}

/// How a line is crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Boundary {
    /// The binding figure grows with the sessions across the line.
    Smooth,
    /// It jumps, or the level beyond collapsed.
    Cliff,
}

/// How a knee was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KneeMethod {
    /// Kneedle on latency inflation against log2 of the sessions (the latency knee).
    LatencyKneedle,
    /// Where the first level's throughput per session, carried on, meets the plateau.
    FirstRateMeetsPlateau,
    /// The first step where a session adds under half of what one gave at the first level.
    HalfGain,
}

/// What binds beyond a line: a budget broken (its key), or a collapse.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Binding {
    Budget(String),
    Collapse(crate::Outcome),
}

/// What else a ladder shows besides its line and its wall, with its figures: what grows
/// with sessions (and which limit it reaches first), a cold start, threads queueing for
/// a core, a rate that needed checking, an agent worker's own reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    Count(CountGrowth),
    Rising(Rising),
    Memory(MemoryGrowth),
    /// Of several findings that project a limit, the nearest.
    FirstToRunOut {
        finding: Box<Finding>,
    },
    /// The farther projected limits, nearest first.
    FartherOff {
        unit: Unit,
        limits: Vec<Limit>,
    },
    ColdStart(Cold),
    RunQueue(RunQueue),
    RateFellBack(RateFellBack),
    /// The agent worker marked itself full, and no call failed for it.
    WorkerFull(WorkerFull),
    /// The agent worker's event loops blocked past its loop monitor's threshold.
    LoopsBlocked {
        levels: Vec<Blocked>,
    },
}

/// A resource a growth runs out of.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Threads,
    OpenFiles,
    Connections,
    MemoryCap { mb: f64 },
}

/// Where a growing resource runs out: at about `near` sessions (or calls).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub resource: Resource,
    pub near: f64,
}

/// What each session holds of a count, read from the slope against its turns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    /// A call holds what it holds while it lasts.
    WhileACallLasts,
    /// One per request (turn), never released.
    PerTurnNeverReleased,
    OnePerSession,
    ManyPerSession,
}

/// A count (threads, open files, connections) that grows with every session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountGrowth {
    pub resource: Resource,
    pub unit: Unit,
    pub slope: f64,
    /// Its value at the top level that held a session.
    pub at_top: f64,
    pub top_level: usize,
    pub held: Held,
    /// What 10,000 sessions would need.
    pub at_10k: f64,
    /// The box's limit of it, and the sessions at which it runs out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_out_near: Option<f64>,
}

/// A figure per session or per turn that rises with the sessions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RisingFigure {
    /// KB per session (PSS where read, RSS else).
    MemoryPerSession,
    /// The SUT's CPU ms per turn.
    CpuPerTurn,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rising {
    pub figure: RisingFigure,
    pub unit: Unit,
    /// (sessions, value) at the lowest and the highest level that did not collapse.
    pub first: (f64, f64),
    pub last: (f64, f64),
}

/// Memory that grows with every session, and where a memory cap runs out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryGrowth {
    pub unit: Unit,
    pub mb_per_session: f64,
    pub measure: crate::MemoryMeasure,
    /// (level, peak MB) at the lowest and the highest level that did not collapse.
    pub first: (usize, f64),
    pub top: (usize, f64),
    /// The memory cap (MB) and the sessions it would hold, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<(f64, f64)>,
    /// What 1,000 sessions would need, in MB.
    pub at_1000_mb: f64,
    /// The wall that stops the sessions before memory does, and from where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_first: Option<(crate::WallKind, f64)>,
}

/// Each session's first turn much slower than the rest, at the ladder's first level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cold {
    pub unit: Unit,
    pub level: usize,
    pub first_turn_ms: f64,
    pub later_turn_ms: f64,
    /// The turns a session had, when too few to reach a steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_turns: Option<u64>,
    /// A first level of many sessions: this may be their first turns queueing.
    #[serde(default)]
    pub may_be_queueing: bool,
}

/// How a CPU cap was held: its cores, and the cores it may run on where known.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapHeld {
    pub cores: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<f64>,
}

/// What other processes took of the cores at the level quoted (the one the line is drawn
/// at, or the busiest): a share of the SUT's cores, or of Plimsoll's own where only those
/// were taken and it fell behind (`starved`, said only where that put the level in
/// doubt); whether it did (`contaminated`); the
/// SUT's wait for a CPU where worth saying; how a quota over more cores held it; the
/// levels run again after a pause.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub level: usize,
    pub share: f64,
    pub contaminated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starved: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<CapHeld>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reran: Vec<usize>,
}

/// The SUT's threads runnable and waiting for a CPU, where that moved its latency.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunQueue {
    pub unit: Unit,
    pub level: usize,
    pub waited_ms_per_s: f64,
    pub wait_ms_per_turn: f64,
    /// What a turn took beyond the mock's own time.
    pub beyond_ms: f64,
    pub cpu_of_cap: f64,
    /// A quota that throttled it: the share of its periods, and how it was held (None:
    /// "its quota").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<(f64, Option<CapHeld>)>,
}

/// Levels whose rate is the whole step's, the rate of full load having failed its check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateFellBack {
    pub levels: Vec<usize>,
    pub wall_turns_per_s: f64,
    pub full_load_turns_per_s: f64,
    /// What the CPU per turn allows, where full load read more than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_allows: Option<f64>,
}

/// The worker marked full: the load it read and its threshold, where logged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerFull {
    pub level: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

/// How often, and how long at most, the worker's loops blocked at one level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Blocked {
    pub level: usize,
    pub times: u64,
    pub longest_ms: f64,
}

/// Reading a field that runs recorded before it was typed wrote as a sentence (or a list
/// of them): the sentences are dropped, since the verdict's `lines` hold their words.
pub mod legacy {
    use serde::de::DeserializeOwned;
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    /// An optional fact: a sentence reads as none.
    pub fn option<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: DeserializeOwned,
    {
        match Value::deserialize(d)? {
            Value::Null | Value::String(_) => Ok(None),
            v => serde_json::from_value(v)
                .map(Some)
                .map_err(serde::de::Error::custom),
        }
    }

    /// A knee's method: its name, or the sentence a run recorded before it had one (the
    /// three sentences written from 11-23 on, one a method); anything else reads as none,
    /// and the report then leaves the method out (runs of the first hours of 11-23 wrote
    /// two other sentences, for methods since changed).
    pub fn knee_method<'de, D>(d: D) -> Result<Option<super::KneeMethod>, D::Error>
    where
        D: Deserializer<'de>,
    {
        use super::KneeMethod::*;
        let Some(said) = Option::<String>::deserialize(d)? else {
            return Ok(None);
        };
        if let Ok(m) = serde_json::from_value(Value::String(said.clone())) {
            return Ok(Some(m));
        }
        Ok(match said.as_str() {
            "Kneedle on latency inflation vs log2(concurrency) (normalised, max of x - y)" => {
                Some(LatencyKneedle)
            }
            "where the first level's throughput per session, carried on, meets the plateau (never past the plateau's first level)" => {
                Some(FirstRateMeetsPlateau)
            }
            "the first step where a session adds < 50 % of what one gave at the first level" => {
                Some(HalfGain)
            }
            _ => None,
        })
    }

    /// A list of facts: its sentences are left out.
    pub fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: DeserializeOwned,
    {
        let items = match Value::deserialize(d)? {
            Value::Array(items) => items,
            _ => return Ok(Vec::new()),
        };
        items
            .into_iter()
            .filter(|v| !v.is_string())
            .map(|v| serde_json::from_value(v).map_err(serde::de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Doc {
        #[serde(default, deserialize_with = "legacy::option")]
        cost: Option<FirstCost>,
        #[serde(default, deserialize_with = "legacy::list")]
        notes: Vec<Note>,
    }

    /// A run recorded with sentences reads, its sentences dropped; a typed one reads back.
    #[test]
    fn sentences_of_old_runs_read_as_nothing_and_facts_read_back() {
        let old: Doc = serde_json::from_str(
            r#"{"cost": "at 1 session a turn takes 14 ms more", "notes": ["the SUT's CPU per turn varied"]}"#,
        )
        .unwrap();
        assert_eq!((old.cost, old.notes), (None, vec![]));
        let note = Note::UnstableCost {
            low: (1, 2.0),
            high: (8, 3.5),
        };
        let json = format!(
            r#"{{"cost": {}, "notes": [{}]}}"#,
            serde_json::to_string(&FirstCost {
                level: 2,
                inflation: 2.4,
                ..Default::default()
            })
            .unwrap(),
            serde_json::to_string(&note).unwrap()
        );
        let new: Doc = serde_json::from_str(&json).unwrap();
        assert_eq!(new.cost.map(|c| c.level), Some(2));
        assert_eq!(new.notes, vec![note]);
        let absent: Doc = serde_json::from_str("{}").unwrap();
        assert_eq!((absent.cost, absent.notes.len()), (None, 0));
    }

    /// A knee's method recorded as its sentence reads as the method; as its name, too;
    /// a sentence no version wrote, or none, as none.
    #[test]
    fn a_knees_method_reads_from_its_old_sentence_and_its_name() {
        use crate::ladder::Knee;
        let knee = |method: &str| -> Knee {
            serde_json::from_str(&format!(
                r#"{{"from": 8.0, "to": 16.0, "confidence": "clear"{method}}}"#
            ))
            .unwrap()
        };
        let old = knee(
            r#", "method": "where the first level's throughput per session, carried on, meets the plateau (never past the plateau's first level)""#,
        );
        assert_eq!(old.method, Some(KneeMethod::FirstRateMeetsPlateau));
        let named = knee(r#", "method": "half_gain""#);
        assert_eq!(named.method, Some(KneeMethod::HalfGain));
        assert_eq!(knee(r#", "method": "by eye""#).method, None);
        assert_eq!(knee("").method, None);
        let back = Knee {
            method: Some(KneeMethod::LatencyKneedle),
            ..old
        };
        let json = serde_json::to_string(&back).unwrap();
        assert!(json.contains(r#""method":"latency_kneedle""#), "{json}");
        assert_eq!(serde_json::from_str::<Knee>(&json).unwrap(), back);
    }
}
