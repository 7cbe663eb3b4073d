//! `plimsoll ramp`: a ladder of fresh steps under a resource cap, stopping at the first
//! collapse; then the ceiling, the knee, a USL fit and a capacity projection, printed as
//! the table grows and written as `result.json` and `report.md`.

use crate::analysis::{self, Point};
use crate::config::Config;
use crate::result::StepResult;
use crate::step::{run_step, StepOptions};
use anyhow::Context;
use serde_json::json;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub enum Levels {
    List(Vec<usize>),
    /// Doubling from `start` until a collapse, at most `max_steps` steps.
    Auto {
        start: usize,
        max_steps: usize,
    },
}

/// `"10,20,40"` or `"auto"`.
pub fn parse_levels(s: &str, start: usize) -> Result<Levels, String> {
    if s.trim() == "auto" {
        return Ok(Levels::Auto {
            start: start.max(1),
            max_steps: 14,
        });
    }
    let mut v = Vec::new();
    for part in s.split(',') {
        let n: usize = part.trim().parse().map_err(|_| {
            format!("--ladder {s:?}: {part:?} is not a whole number; write e.g. 10,20,40 or auto")
        })?;
        if n == 0 {
            return Err(format!("--ladder {s:?}: levels start at 1"));
        }
        if v.last().is_some_and(|&last| n <= last) {
            return Err(format!("--ladder {s:?}: levels must increase"));
        }
        v.push(n);
    }
    Ok(Levels::List(v))
}

#[derive(Clone, Debug, Default)]
pub struct RampOptions {
    pub step: StepOptions,
    /// (GB, cores) of the host to project onto.
    pub host: Option<(f64, f64)>,
    pub target: Option<u64>,
    pub out: Option<PathBuf>,
    /// The history database (None: do not record).
    pub history: Option<PathBuf>,
}

/// `"64GB,16cpu"` → (64, 16).
pub fn parse_host(s: &str) -> Result<(f64, f64), String> {
    let (mut gb, mut cpus) = (None, None);
    for part in s.split(',') {
        let p = part.trim().to_ascii_lowercase();
        if let Some(v) = p.strip_suffix("gb").or_else(|| p.strip_suffix('g')) {
            gb = v.trim().parse().ok();
        } else if let Some(v) = p
            .strip_suffix("cpu")
            .or_else(|| p.strip_suffix("cpus"))
            .or_else(|| p.strip_suffix("cores"))
        {
            cpus = v.trim().parse().ok();
        }
    }
    match (gb, cpus) {
        (Some(g), Some(c)) if g > 0.0 && c > 0.0 => Ok((g, c)),
        _ => Err(format!(
            "--host {s:?}: write memory and cores, e.g. 64GB,16cpu"
        )),
    }
}

/// One table row from a RESULT object (as stored, so history re-renders the same).
fn row(r: &serde_json::Value) -> String {
    let o = |k: &str| r[k].as_f64().map_or("—".to_string(), |v| format!("{v:.1}"));
    format!(
        "| {:>7} | {:<17} | {:>9} | {:>9} | {:>9} | {:>8} | {:>9} | {:>7} | {:>8} | {:<7} |",
        r["concurrency"],
        r["outcome"].as_str().unwrap_or(""),
        o("p50_session_ms"),
        o("p99_session_ms"),
        o("latency_inflation"),
        o("peak_rss_mb"),
        o("rss_kb_per_session"),
        r["peak_threads"],
        o("cpu_ms_per_turn"),
        r["harness"]["bound"].as_str().unwrap_or(""),
    )
}

const HEADER: &str = "| sessions | outcome           | p50 ms    | p99 ms    | inflation | RSS MB   | KB/sess   | threads | CPU/turn | bound   |\n|---------:|:------------------|----------:|----------:|----------:|---------:|----------:|--------:|---------:|:--------|";

pub async fn run_ladder(
    cfg: &Config,
    levels: Levels,
    opts: &RampOptions,
) -> anyhow::Result<serde_json::Value> {
    let environment = environment(cfg, opts);
    let history = opts
        .history
        .as_deref()
        .map(store::History::open)
        .transpose()?;
    let started = crate::cap::now_rfc3339();
    let run_id = match &history {
        Some(h) => Some(h.start_run(&started, &cfg.file.display().to_string(), &environment)?),
        None => None,
    };
    let mut steps: Vec<StepResult> = Vec::new();
    let mut causes: Vec<Option<String>> = Vec::new();
    let mut interrupted = false;
    eprintln!("{HEADER}");
    let mut i = 0usize;
    loop {
        let level = match &levels {
            Levels::List(v) => match v.get(i) {
                Some(&n) => n,
                None => break,
            },
            Levels::Auto { start, max_steps } => {
                if i >= *max_steps {
                    break;
                }
                start << i
            }
        };
        let mut o = opts.step.clone();
        o.concurrency = Some(level);
        let step = tokio::select! {
            r = run_step(cfg, &o) => r.with_context(|| format!("step at {level} sessions"))?,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("interrupted: the finished steps are kept; the run is marked interrupted");
                interrupted = true;
                break;
            }
        };
        let value = serde_json::to_value(&step.result)?;
        // Nothing reaches the history or result.json that the schema would refuse.
        crate::schema::check(&value).map_err(|e| {
            anyhow::anyhow!("step at {level} sessions produced a RESULT the schema refuses: {e}")
        })?;
        eprintln!("{}", row(&value));
        if let (Some(h), Some(id)) = (&history, run_id) {
            h.add_step(id, steps.len(), &value)?;
        }
        let collapsed = step.result.outcome != "ok";
        steps.push(step.result);
        causes.push(step.cause);
        if collapsed {
            break;
        }
        i += 1;
    }
    let analysis = analyse(&steps, &causes, opts, interrupted);
    if let (Some(h), Some(id)) = (&history, run_id) {
        h.finish_run(
            id,
            if interrupted { "interrupted" } else { "done" },
            &analysis,
        )?;
    }
    let doc = json!({
        "schema_version": 1,
        "run": run_id,
        "config": cfg.file.display().to_string(),
        "environment": environment,
        "interrupted": interrupted,
        "steps": steps,
        "analysis": analysis,
    });
    print_verdict(&doc);
    if let Some(dir) = &opts.out {
        write_reports(&doc, dir)?;
    }
    Ok(doc)
}

/// Writes `result.json`, `report.md` and `report.html` for a ladder document (fresh or from history).
pub fn write_reports(doc: &serde_json::Value, dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("result.json"), serde_json::to_string_pretty(doc)?)?;
    std::fs::write(dir.join("report.md"), markdown(doc))?;
    std::fs::write(dir.join("report.html"), crate::html::render(doc))?;
    eprintln!(
        "wrote {0}/result.json, {0}/report.md and {0}/report.html",
        dir.display()
    );
    Ok(())
}

/// Re-renders a run stored in the history: the verdict on the terminal, the files in `out`.
pub fn report_from_history(
    db: &std::path::Path,
    run: i64,
    out: Option<&std::path::Path>,
) -> anyhow::Result<serde_json::Value> {
    let h = store::History::open(db)?;
    let doc = h.run(run)?.with_context(|| {
        format!(
            "no run {run} in {}; `plimsoll history` lists the runs",
            db.display()
        )
    })?;
    eprintln!("{HEADER}");
    for s in doc["steps"].as_array().into_iter().flatten() {
        eprintln!("{}", row(s));
    }
    if doc["analysis"].is_null() {
        eprintln!(
            "run {run} did not finish (status {}): the steps above are all it has",
            doc["status"]
        );
    } else {
        print_verdict(&doc);
    }
    if let Some(dir) = out {
        write_reports(&doc, dir)?;
    }
    Ok(doc)
}

/// Where Plimsoll ran and what it ran: stored with every run.
fn environment(cfg: &Config, opts: &RampOptions) -> serde_json::Value {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let mem_gb = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| (kb / 1048576.0 * 10.0).round() / 10.0);
    let git = std::process::Command::new("git")
        .arg("-C")
        .arg(&cfg.cwd)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    json!({
        "machine": probe::machine::fingerprint(),
        "memory_gb": mem_gb,
        "kernel": read("/proc/sys/kernel/osrelease"),
        // The method a step's cap will use, found the way a step finds it (and removed again).
        "cap": opts.step.cap.map(|c| json!({
            "cpus": c.cpus,
            "mem_bytes": c.mem_bytes,
            "method": crate::cap::Cap::create(c, "probe").method,
        })),
        "sut_git_commit": git,
        "plimsoll_version": env!("CARGO_PKG_VERSION"),
        "sut_command": cfg.command,
    })
}

fn analyse(
    steps: &[StepResult],
    causes: &[Option<String>],
    opts: &RampOptions,
    interrupted: bool,
) -> serde_json::Value {
    let ok: Vec<&StepResult> = steps.iter().filter(|s| s.outcome == "ok").collect();
    let ceiling = ok.last();
    let collapse = steps.iter().zip(causes).find(|(s, _)| s.outcome != "ok");
    let points: Vec<Point> = ok
        .iter()
        .filter_map(|s| {
            Some(Point {
                concurrency: s.concurrency as f64,
                inflation: s.latency_inflation?,
                throughput: s.turns as f64 / (s.wall_ms / 1000.0).max(1e-9),
            })
        })
        .collect();
    let knee = analysis::knee(&points);
    let usl = analysis::usl(&points);
    let harness_bound: Vec<usize> = steps
        .iter()
        .filter(|s| s.harness.bound == "harness")
        .map(|s| s.concurrency)
        .collect();
    let capacity = match (ceiling, opts.host) {
        (Some(c), Some((gb, cpus))) => {
            let turns_per_session = c.turns as f64 / c.concurrency as f64;
            let per_s = c
                .p50_session_ms
                .map_or(0.0, |ms| turns_per_session / (ms / 1000.0).max(1e-9));
            Some(analysis::capacity(
                c.rss_kb_per_session.max(0.0),
                c.cpu_ms_per_turn.unwrap_or(0.0),
                per_s,
                gb,
                cpus,
                opts.target,
            ))
        }
        _ => None,
    };
    json!({
        "ceiling": ceiling.map(|c| c.concurrency),
        "ceiling_is_harness_bound": ceiling.is_some_and(|c| c.harness.bound == "harness"),
        "collapse": collapse.map(|(s, cause)| json!({"concurrency": s.concurrency, "outcome": s.outcome, "cause": cause})),
        "no_collapse": collapse.is_none() && !interrupted,
        "knee": knee,
        "usl": match usl { Ok(u) => json!(u), Err(e) => json!({"refused": e}) },
        "capacity": capacity,
        "harness_bound_steps": harness_bound,
    })
}

fn print_verdict(doc: &serde_json::Value) {
    let a = &doc["analysis"];
    match a["ceiling"].as_u64() {
        Some(c) if a["ceiling_is_harness_bound"] == true => eprintln!(
            "ceiling: {c} sessions — but that step was HARNESS-BOUND: Plimsoll was the bottleneck, not the SUT"
        ),
        Some(c) => eprintln!("ceiling: {c} sessions (the last step without a collapse)"),
        None => eprintln!("ceiling: none — the first step already collapsed"),
    }
    if let Some(c) = a["collapse"].as_object() {
        eprintln!(
            "collapse at {} sessions: {} — {}",
            c["concurrency"],
            c["outcome"].as_str().unwrap_or(""),
            c["cause"].as_str().unwrap_or("")
        );
    } else if a["no_collapse"] == true {
        eprintln!("no collapse within the ladder: the ceiling is at the top level or beyond — widen the ladder");
    }
    let k = &a["knee"];
    let conf = k["confidence"].as_str().unwrap_or("");
    match conf {
        "insufficient" => eprintln!("knee: not enough steps (3 needed)"),
        "flat" => eprintln!(
            "knee: none within the ladder — latency inflation stayed within 15 % up to {} sessions",
            k["from"]
        ),
        "at_the_end" => eprintln!(
            "knee: {} or beyond — latency turns at the last level; widen the ladder",
            k["from"]
        ),
        _ => eprintln!(
            "knee: between {} and {} sessions ({conf}; {})",
            k["from"],
            k["to"],
            k["method"].as_str().unwrap_or("")
        ),
    }
    match a["usl"]["refused"].as_str() {
        Some(why) => eprintln!("USL: not fitted — {why}"),
        None => eprintln!(
            "USL: σ = {:.4}, κ = {:.6}, λ = {:.2} turns/s; predicted peak {} (R² {:.3})",
            a["usl"]["sigma"].as_f64().unwrap_or(0.0),
            a["usl"]["kappa"].as_f64().unwrap_or(0.0),
            a["usl"]["lambda"].as_f64().unwrap_or(0.0),
            a["usl"]["peak_concurrency"].as_f64().map_or(
                "none (no coherency cost seen)".to_string(),
                |p| format!(
                    "at {p:.0} sessions, {:.1} turns/s",
                    a["usl"]["peak_throughput"].as_f64().unwrap_or(0.0)
                )
            ),
            a["usl"]["r2"].as_f64().unwrap_or(0.0)
        ),
    }
    if let Some(lines) = a["capacity"]["working"].as_array() {
        eprintln!("capacity projection (not a measurement):");
        for l in lines {
            eprintln!("  {}", l.as_str().unwrap_or(""));
        }
    }
}

fn markdown(doc: &serde_json::Value) -> String {
    let steps = doc["steps"].as_array().cloned().unwrap_or_default();
    let mut s = format!(
        "# Plimsoll ramp — {}\n\nRun {} · machine: {} · cap: {}\n\n{HEADER}\n",
        doc["config"].as_str().unwrap_or(""),
        doc["run"],
        doc["environment"]["machine"].as_str().unwrap_or(""),
        doc["environment"]["cap"]
    );
    for r in &steps {
        s.push_str(&row(r));
        s.push('\n');
    }
    let a = &doc["analysis"];
    s.push_str(&format!(
        "\n*How to read this:* one fresh SUT per row; inflation is p50 session time over the time the mock itself took; KB/sess is (peak − baseline RSS) / sessions; `bound = harness` rows describe Plimsoll, not the SUT.\n\n- ceiling: {}\n- knee: {} – {} ({})\n- collapse: {}\n",
        a["ceiling"],
        a["knee"]["from"],
        a["knee"]["to"],
        a["knee"]["confidence"].as_str().unwrap_or(""),
        a["collapse"]
    ));
    if let Some(why) = a["usl"]["refused"].as_str() {
        s.push_str(&format!("- USL: not fitted — {why}\n"));
    } else {
        s.push_str(&format!(
            "- USL: σ = {}, κ = {}, λ = {}, peak at {} (R² {})\n",
            a["usl"]["sigma"],
            a["usl"]["kappa"],
            a["usl"]["lambda"],
            a["usl"]["peak_concurrency"],
            a["usl"]["r2"]
        ));
    }
    if let Some(lines) = a["capacity"]["working"].as_array() {
        s.push_str("\n## Capacity projection (not a measurement)\n\n");
        for l in lines {
            s.push_str(&format!("- {}\n", l.as_str().unwrap_or("")));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ladders_and_hosts() {
        assert_eq!(
            parse_levels("10, 20,40", 5).unwrap(),
            Levels::List(vec![10, 20, 40])
        );
        assert_eq!(
            parse_levels("auto", 5).unwrap(),
            Levels::Auto {
                start: 5,
                max_steps: 14
            }
        );
        assert!(parse_levels("10,5", 1).unwrap_err().contains("increase"));
        assert!(parse_levels("10,x", 1)
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(parse_host("64GB,16cpu").unwrap(), (64.0, 16.0));
        assert!(parse_host("64GB").is_err());
    }
}
