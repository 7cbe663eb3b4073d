//! `plimsoll ramp`: a ladder of fresh steps under a resource cap, stopping at the first
//! collapse; then the ceiling, the knee, a USL fit and a capacity projection, printed as
//! the table grows and written as `result.json` and `report.md`.

use anyhow::Context;
use report::table::{row, HEADER};
use result::StepResult;
use serde_json::json;
use std::path::PathBuf;
use step::{run_step, Config, StepOptions};

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
    let started = step::now_rfc3339();
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
        result::schema::check(&value).map_err(|e| {
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
    let analysis = analysis::ladder::analyse(&steps, &causes, opts.host, opts.target, interrupted);
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
    std::fs::write(dir.join("report.md"), report::markdown::ladder(doc))?;
    std::fs::write(dir.join("report.html"), report::html::render(doc))?;
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
            "method": cap::Cap::create(c, "probe").method,
        })),
        "sut_git_commit": git,
        "plimsoll_version": env!("CARGO_PKG_VERSION"),
        "sut_command": cfg.command,
    })
}

fn print_verdict(doc: &serde_json::Value) {
    for line in report::verdict::verdict_lines(doc) {
        eprintln!("{line}");
    }
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
