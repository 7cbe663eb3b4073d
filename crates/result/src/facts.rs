//! A verdict's facts beside its line and its wall, typed with their figures: where one
//! call's own pace set a voice budget (`Paced`), what a session costs when even the first
//! level is over budget (`FirstCost`), what makes the reading less certain (`Note`).
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
}
