//! What the shards of one run share at the mock they all talk to: a barrier (each shard
//! says it is up; when all are, every one is given the same start time) and a drop box
//! for their files, which `plimsoll merge --from` collects. One logical provider for the
//! whole run, not one per shard.
//!
//! `POST /plimsoll/shards/{run}/barrier` `{"index": I, "parties": N, "lead_ms": 3000}`
//! answers `{"start_at_unix_ms": T}` once N distinct indices have arrived (a restarted
//! shard arriving again does not count twice). `PUT /plimsoll/shards/{run}/files/{name}`
//! stores a shard's file; `GET /plimsoll/shards/{run}/files` returns them all.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// The most file bytes the mock keeps for all runs together.
pub const MAX_STORED_BYTES: usize = 256 << 20;

/// The runs' barriers and files; a handle (cloned by every endpoint's call) to the one
/// store the mock keeps.
#[derive(Clone, Default)]
pub struct Rendezvous {
    runs: Arc<Mutex<HashMap<String, Run>>>,
}

struct Run {
    parties: usize,
    arrived: BTreeSet<usize>,
    start: watch::Sender<Option<f64>>,
    files: BTreeMap<String, String>,
}

impl Run {
    fn new(parties: usize) -> Run {
        Run {
            parties,
            arrived: BTreeSet::new(),
            start: watch::channel(None).0,
            files: BTreeMap::new(),
        }
    }
}

fn bad(message: String) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": message}))).into_response()
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

impl Rendezvous {
    /// A shard arrives; the receiver tells the start time once every shard has.
    fn arrive(
        &self,
        run: &str,
        index: usize,
        parties: usize,
        lead_ms: f64,
    ) -> Result<watch::Receiver<Option<f64>>, String> {
        let mut runs = self.runs.lock().unwrap_or_else(|p| p.into_inner());
        let r = runs
            .entry(run.to_string())
            .or_insert_with(|| Run::new(parties));
        if r.parties != parties || index >= parties {
            return Err(format!(
                "run {run:?} has {} shards; shard {index} of {parties} does not belong to it",
                r.parties
            ));
        }
        r.arrived.insert(index);
        if r.arrived.len() == r.parties && r.start.borrow().is_none() {
            r.start.send_replace(Some(now_ms() + lead_ms));
        }
        Ok(r.start.subscribe())
    }

    fn stored_bytes(runs: &HashMap<String, Run>) -> usize {
        runs.values()
            .flat_map(|r| r.files.values())
            .map(String::len)
            .sum()
    }
}

/// `shard-2-of-4.json` or `.hlog`: the only names a shard writes.
fn shard_file(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".json")
        .or_else(|| name.strip_suffix(".hlog"))
    else {
        return false;
    };
    let parts: Vec<&str> = stem.split('-').collect();
    matches!(parts.as_slice(), ["shard", i, "of", n]
        if i.parse::<usize>().is_ok() && n.parse::<usize>().is_ok())
}

pub async fn barrier(
    State(rv): State<Rendezvous>,
    Path(run): Path<String>,
    Json(body): Json<Value>,
) -> Response {
    let (Some(index), Some(parties)) = (body["index"].as_u64(), body["parties"].as_u64()) else {
        return bad("give {\"index\": I, \"parties\": N} (lead_ms optional)".into());
    };
    let lead = body["lead_ms"]
        .as_f64()
        .unwrap_or(3000.0)
        .clamp(0.0, 600_000.0);
    let mut rx = match rv.arrive(&run, index as usize, parties as usize, lead) {
        Ok(rx) => rx,
        Err(m) => return bad(m),
    };
    let start = rx.wait_for(Option::is_some).await.map(|s| *s);
    match start {
        Ok(start) => Json(json!({"start_at_unix_ms": start})).into_response(),
        Err(_) => bad("the barrier was dropped".into()),
    }
}

pub async fn put_file(
    State(rv): State<Rendezvous>,
    Path((run, name)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    if !shard_file(&name) {
        return bad(format!(
            "{name:?} is not a shard's file (shard-I-of-N.json or .hlog)"
        ));
    }
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return bad(format!("{name}: a shard's files are text"));
    };
    let mut runs = rv.runs.lock().unwrap_or_else(|p| p.into_inner());
    if Rendezvous::stored_bytes(&runs) + text.len() > MAX_STORED_BYTES {
        return (
            StatusCode::INSUFFICIENT_STORAGE,
            Json(json!({"error": format!("the mock keeps at most {} MB of shard files", MAX_STORED_BYTES >> 20)})),
        )
            .into_response();
    }
    let parties = name
        .split('-')
        .nth(3)
        .and_then(|n| n.split('.').next()?.parse().ok())
        .unwrap_or(0);
    let r = runs.entry(run).or_insert_with(|| Run::new(parties));
    r.files.insert(name, text);
    Json(json!({"stored": r.files.len()})).into_response()
}

pub async fn get_files(State(rv): State<Rendezvous>, Path(run): Path<String>) -> Json<Value> {
    let runs = rv.runs.lock().unwrap_or_else(|p| p.into_inner());
    let files = runs.get(&run).map(|r| r.files.clone()).unwrap_or_default();
    Json(json!({"run": run, "files": files}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_is_given_when_every_shard_has_arrived_once() {
        let r = Rendezvous::default();
        let a = r.arrive("x", 0, 3, 100.0).unwrap();
        // Shard 0 again (a restarted pod): still one of three.
        let _ = r.arrive("x", 0, 3, 100.0).unwrap();
        assert!(r.arrive("x", 1, 3, 100.0).unwrap().borrow().is_none());
        assert!(a.borrow().is_none());
        let c = r.arrive("x", 2, 3, 100.0).unwrap();
        let t = c.borrow().unwrap();
        assert_eq!(*a.borrow(), Some(t), "the same start for all");
        assert!(r.arrive("x", 3, 3, 0.0).is_err());
        assert!(r.arrive("x", 0, 4, 0.0).is_err());
    }

    #[test]
    fn only_shard_files_are_taken() {
        assert!(shard_file("shard-0-of-4.json") && shard_file("shard-12-of-16.hlog"));
        assert!(!shard_file("../etc/passwd") && !shard_file("shard-a-of-4.json"));
    }
}
