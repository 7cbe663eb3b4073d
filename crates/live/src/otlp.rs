//! The board's metrics pushed over OTLP/HTTP in its JSON encoding (`POST`, every few
//! seconds and once at the end), with the resource a collector expects (`service.name`
//! and its version, the run — with its shard, when sharded — as `service.instance.id`). The metrics are the Prometheus
//! families ([`crate::metrics::families`]) under names that a collector's Prometheus
//! exporter turns back into the same ones: `plimsoll_turns_total` is the monotonic sum
//! `plimsoll.turns`, `plimsoll_turn_duration_seconds` the histogram
//! `plimsoll.turn_duration` in `s`.

use crate::metrics::{Family, Kind, Value};
use serde_json::{json, Value as Json};

/// Where to push: `http://HOST:PORT/PATH` (the path `/v1/metrics` when none is given).
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub path: String,
}

/// Reads `--otlp`'s URL.
pub fn target(url: &str) -> anyhow::Result<Target> {
    let bad = |why: &str| {
        anyhow::anyhow!("--otlp {url:?}: {why}; give http://HOST:PORT (a collector's OTLP/HTTP receiver, e.g. http://127.0.0.1:4318)")
    };
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| match url.starts_with("https://") {
            true => {
                bad("https is not spoken here (run a collector beside Plimsoll and let it forward)")
            }
            false => bad("not an http:// URL"),
        })?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| bad("its port is not a number"))?,
        ),
        None => (authority, 4318),
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    Ok(Target {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string(),
        port,
        path: match path {
            "" | "/" => "/v1/metrics".into(),
            p => p.into(),
        },
    })
}

/// A family's OTLP name and unit, from its Prometheus name.
pub fn name_and_unit(prom: &str) -> (String, &'static str) {
    let base = prom.strip_suffix("_total").unwrap_or(prom);
    let (base, unit) = [
        ("_seconds", "s"),
        ("_bytes", "By"),
        ("_ratio", "1"),
        ("_per_second", "1/s"),
    ]
    .iter()
    .find_map(|(suffix, unit)| Some((base.strip_suffix(suffix)?, *unit)))
    // No unit at all, not "1": a collector's Prometheus exporter adds `_ratio` for "1".
    .unwrap_or((base, ""));
    (base.replacen("plimsoll_", "plimsoll.", 1), unit)
}

fn attributes(labels: &[(&'static str, String)]) -> Json {
    labels
        .iter()
        .map(|(k, v)| json!({"key": k, "value": {"stringValue": v}}))
        .collect()
}

/// One family as an OTLP metric; counters and the histogram count from `start_ns`.
fn metric(f: &Family, start_ns: u64, now_ns: u64) -> Json {
    let (name, unit) = name_and_unit(f.name);
    let points: Vec<Json> = f
        .points
        .iter()
        .map(|(labels, v)| {
            let mut p = json!({
                "attributes": attributes(labels),
                "startTimeUnixNano": start_ns.to_string(),
                "timeUnixNano": now_ns.to_string(),
            });
            match v {
                Value::Number(x) => p["asDouble"] = json!(x),
                Value::Histogram {
                    bounds,
                    cumulative,
                    sum,
                } => {
                    let mut below = 0;
                    let each: Vec<String> = cumulative
                        .iter()
                        .map(|c| {
                            let n = c.saturating_sub(below);
                            below = *c;
                            n.to_string()
                        })
                        .collect();
                    p["count"] = json!(cumulative.last().copied().unwrap_or(0).to_string());
                    p["sum"] = json!(sum);
                    p["bucketCounts"] = json!(each);
                    p["explicitBounds"] = json!(bounds);
                }
            }
            p
        })
        .collect();
    let data = match f.kind {
        Kind::Gauge => ("gauge", json!({"dataPoints": points})),
        Kind::Counter => (
            "sum",
            json!({"dataPoints": points, "aggregationTemporality": 2, "isMonotonic": true}),
        ),
        Kind::Histogram => (
            "histogram",
            json!({"dataPoints": points, "aggregationTemporality": 2}),
        ),
    };
    let mut m = json!({"name": name, "description": f.help, "unit": unit});
    m[data.0] = data.1;
    m
}

/// An `ExportMetricsServiceRequest` of these families, as OTLP's JSON encoding writes it.
pub fn request(
    families: &[Family],
    instance: &str,
    host: &str,
    start_ns: u64,
    now_ns: u64,
) -> Json {
    let resource = [
        ("service.name", "plimsoll".to_string()),
        ("service.version", env!("CARGO_PKG_VERSION").to_string()),
        ("service.instance.id", instance.to_string()),
        ("host.name", host.to_string()),
    ];
    json!({
        "resourceMetrics": [{
            "resource": {"attributes": attributes(&resource)},
            "scopeMetrics": [{
                "scope": {"name": "plimsoll", "version": env!("CARGO_PKG_VERSION")},
                "metrics": families.iter().map(|f| metric(f, start_ns, now_ns)).collect::<Vec<_>>(),
            }],
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_the_receiver_and_its_path() {
        let t = target("http://127.0.0.1:4318").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 4318, "/v1/metrics")
        );
        let t = target("http://collector/otlp/v1/metrics").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("collector", 4318, "/otlp/v1/metrics")
        );
        for bad in [
            "https://x:4318",
            "127.0.0.1:4318",
            "http://:4318",
            "http://x:port",
        ] {
            let e = target(bad).unwrap_err().to_string();
            assert!(
                e.contains("--otlp") && e.contains("http://HOST:PORT"),
                "{e}"
            );
        }
    }

    #[test]
    fn names_turn_back_into_the_prometheus_ones() {
        assert_eq!(
            name_and_unit("plimsoll_turns_total"),
            ("plimsoll.turns".into(), "")
        );
        assert_eq!(
            name_and_unit("plimsoll_turn_duration_seconds"),
            ("plimsoll.turn_duration".into(), "s")
        );
        assert_eq!(
            name_and_unit("plimsoll_sut_cpu_seconds_total"),
            ("plimsoll.sut_cpu".into(), "s")
        );
        assert_eq!(
            name_and_unit("plimsoll_step_peak_resident_memory_bytes"),
            ("plimsoll.step_peak_resident_memory".into(), "By")
        );
        assert_eq!(
            name_and_unit("plimsoll_step_turns_per_second"),
            ("plimsoll.step_turns".into(), "1/s")
        );
        assert_eq!(
            name_and_unit("plimsoll_level"),
            ("plimsoll.level".into(), "")
        );
        assert_eq!(
            name_and_unit("plimsoll_step_cpu_cap_ratio"),
            ("plimsoll.step_cpu_cap".into(), "1")
        );
    }

    #[test]
    fn a_histogram_goes_out_with_its_counts_per_bucket() {
        let f = Family {
            name: "plimsoll_turn_duration_seconds",
            kind: Kind::Histogram,
            help: "h",
            points: vec![(
                vec![("level", "8".into())],
                Value::Histogram {
                    bounds: vec![0.1, 1.0],
                    cumulative: vec![2, 5, 9],
                    sum: 4.5,
                },
            )],
        };
        let r = request(&[f], "r", "box", 1, 2);
        let m = &r["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0];
        let p = &m["histogram"]["dataPoints"][0];
        assert_eq!(p["bucketCounts"], json!(["2", "3", "4"]));
        assert_eq!(
            (p["count"].as_str(), p["sum"].as_f64()),
            (Some("9"), Some(4.5))
        );
        assert_eq!(m["histogram"]["aggregationTemporality"], 2);
        assert_eq!(p["attributes"][0]["value"]["stringValue"], "8");
        let res = &r["resourceMetrics"][0]["resource"]["attributes"];
        assert_eq!(
            res[0],
            json!({"key": "service.name", "value": {"stringValue": "plimsoll"}})
        );
    }
}
