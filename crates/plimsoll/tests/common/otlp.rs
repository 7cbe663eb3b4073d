//! A collector's OTLP/HTTP receiver, as small as a test needs: it answers every POST 200
//! and keeps each body (OTLP's JSON encoding), and reads the figures back out of them.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

pub struct Receiver {
    pub url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    /// Listens on a free loopback port, for the rest of the test.
    pub fn start() -> Receiver {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", l.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        std::thread::spawn(move || {
            for conn in l.incoming().map_while(Result::ok) {
                if let Some(v) = one(conn) {
                    kept.lock().unwrap().push(v);
                }
            }
        });
        Receiver { url, bodies }
    }

    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

/// One request (the pusher closes after each): its JSON body, answered 200.
fn one(mut conn: std::net::TcpStream) -> Option<Value> {
    let mut r = BufReader::new(conn.try_clone().ok()?);
    let mut len = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok()?;
            }
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    let _ = conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    serde_json::from_slice(&body).ok()
}

/// A resource attribute of a pushed body (`service.instance.id`, …).
pub fn resource(body: &Value, key: &str) -> Option<String> {
    body["resourceMetrics"][0]["resource"]["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)?["value"]["stringValue"]
        .as_str()
        .map(String::from)
}

/// The data points of metric `name` in a pushed body.
pub fn points(body: &Value, name: &str) -> Vec<Value> {
    let metrics = body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    metrics
        .iter()
        .filter(|m| m["name"] == name)
        .flat_map(|m| {
            ["sum", "gauge", "histogram"]
                .iter()
                .flat_map(|k| m[*k]["dataPoints"].as_array().cloned().unwrap_or_default())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A data point's attribute.
pub fn label(point: &Value, key: &str) -> Option<String> {
    point["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)?["value"]["stringValue"]
        .as_str()
        .map(String::from)
}

/// The last push of each of run `run`'s `n` shards (at `level`), added up: sessions ended
/// ok, turns, turns timed in the latency histogram. Every point names its shard; a shard's
/// SUT is not sampled, so no SUT figure is pushed as a zero.
pub fn shards_added(bodies: &[Value], run: &str, n: usize, level: usize) -> (u64, u64, u64) {
    let mut sum = (0, 0, 0);
    for i in 0..n {
        let instance = format!("{run}-shard-{i}-of-{n}");
        let last = bodies
            .iter()
            .rfind(|b| resource(b, "service.instance.id").as_deref() == Some(&instance))
            .unwrap_or_else(|| panic!("no push from {instance}"));
        let one = |name: &str, outcome: Option<&str>| {
            let p = points(last, name)
                .into_iter()
                .find(|p| outcome.is_none() || label(p, "outcome").as_deref() == outcome)
                .unwrap_or_else(|| panic!("{instance}: no {name}"));
            assert_eq!(label(&p, "shard"), Some(i.to_string()), "{p}");
            assert_eq!(label(&p, "level"), Some(level.to_string()), "{p}");
            p
        };
        // OTLP's JSON writes a double as a number, a 64-bit count as a string.
        let n = |p: Value, k: &str| match &p[k] {
            Value::String(s) => s.parse::<f64>().ok(),
            v => v.as_f64(),
        };
        sum.0 += n(one("plimsoll.sessions", Some("ok")), "asDouble").unwrap() as u64;
        sum.1 += n(one("plimsoll.turns", None), "asDouble").unwrap() as u64;
        sum.2 += n(one("plimsoll.turn_duration", None), "count").unwrap() as u64;
        assert!(points(last, "plimsoll.sut_threads").is_empty());
        assert!(points(last, "plimsoll.sut_resident_memory").is_empty());
    }
    sum
}
