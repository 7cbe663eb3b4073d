//! `plimsoll ramp --sweep NAME=V,V,…`: fresh steps along any axis — concurrency, or what
//! the session file says (turns, think time, a bus's messages, rate, subscribers,
//! publishers, body size) — one or two axes (a grid), stopping each row at its first
//! collapse; the cliff per row, a table, and a heat map in report.html.

use crate::ladder::RampOptions;
use anyhow::Context;
use experiment::Config;
pub use result::environment::Axis;
use result::environment::Environment;
use result::sweep::{Cell, Sweep, SweepDoc};
use result::{PointStanding, Standing};

/// `messages=50,100,150` → the axis; names are `concurrency` or a session axis.
pub fn parse_axis(s: &str) -> Result<Axis, String> {
    let (name, list) = s
        .split_once('=')
        .ok_or_else(|| format!("--sweep {s:?}: write NAME=V,V,…, e.g. messages=50,100,200"))?;
    let name = name.trim();
    if name != "concurrency" && !drive::spec::AXES.iter().any(|(n, _)| *n == name) {
        return Err(format!(
            "--sweep {s:?}: {}",
            drive::spec::unknown_axis(name)
        ));
    }
    let mut values: Vec<f64> = Vec::new();
    for part in list.split(',') {
        let v: f64 = part
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("--sweep {s:?}: {part:?} is not a number ≥ 0"))?;
        if values.last().is_some_and(|&last| v <= last) {
            return Err(format!(
                "--sweep {s:?}: values must increase (a row stops at its first collapse)"
            ));
        }
        values.push(v);
    }
    if name == "concurrency" && values.iter().any(|v| *v < 1.0 || v.fract() != 0.0) {
        return Err(format!(
            "--sweep {s:?}: concurrency takes whole numbers from 1"
        ));
    }
    Ok(Axis {
        name: name.to_string(),
        values,
    })
}

/// `--set messages=150` → ("messages", 150).
pub fn parse_set(s: &str) -> Result<(String, f64), String> {
    let a = parse_axis(s).map_err(|e| e.replace("--sweep", "--set"))?;
    match a.values.as_slice() {
        [v] if a.name != "concurrency" => Ok((a.name, *v)),
        [_] => Err(format!("--set {s:?}: concurrency is -c / --concurrency")),
        _ => Err(format!(
            "--set {s:?}: one value (a sweep takes several: --sweep)"
        )),
    }
}

/// Every point of the grid, the last axis fastest.
fn grid(axes: &[Axis]) -> Vec<Vec<f64>> {
    axes.iter().fold(vec![Vec::new()], |acc, a| {
        acc.iter()
            .flat_map(|p| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(*v);
                    q
                })
            })
            .collect()
    })
}

fn label(axes: &[Axis], values: &[f64]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{}={}", a.name, analysis::budget::num(*v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A point not run (interrupted, or its row collapsed at a smaller value).
fn skipped(values: &[f64], name: &str) -> Cell {
    Cell {
        values: values.to_vec(),
        label: name.to_string(),
        standing: PointStanding::Skipped,
        ..Cell::default()
    }
}

/// The sweep document from its parts: each row's cliff worked out from the cells (so a
/// run re-read from the history, finished or not, gets the same verdict).
pub fn document(
    config: &str,
    environment: Environment,
    interrupted: bool,
    cells: Vec<Cell>,
) -> SweepDoc {
    let axes = environment.sweep.clone().unwrap_or_default();
    let rows = analysis::sweep::rows(axes.len(), &cells);
    SweepDoc {
        schema_version: 1,
        config: config.to_string(),
        interrupted,
        sweep: Sweep {
            axes,
            budget: environment.budget.clone(),
            cells,
            rows,
        },
        environment,
    }
}

/// One point run: its cell, and whether it collapsed; None when Ctrl-C stopped it.
async fn point(
    cfg: &Config,
    axes: &[Axis],
    values: &[f64],
    opts: &RampOptions,
) -> anyhow::Result<Option<(Cell, bool)>> {
    let name = label(axes, values);
    let mut o = opts.step.clone();
    for (a, v) in axes.iter().zip(values) {
        match a.name.as_str() {
            "concurrency" => o.concurrency = Some(*v as usize),
            n => o.set.push((n.to_string(), *v)),
        }
    }
    let Some(step) = crate::clean::run_clean(cfg, &o, &name)
        .await
        .with_context(|| format!("step at {name}"))?
    else {
        return Ok(None);
    };
    let standing = analysis::verdict::standing(&step.result, &opts.budget, None);
    let why = match standing {
        Standing::Collapsed => step.cause.as_ref().map(|c| {
            let said = words::cause::said(c);
            let first = said.lines().next().unwrap_or("");
            format!("{}: {first}", step.result.outcome)
        }),
        Standing::Over => Some(
            analysis::verdict::step_breaches(&step.result, &opts.budget)
                .iter()
                .map(|b| b.text())
                .collect::<Vec<_>>()
                .join("; "),
        ),
        Standing::Holds => None,
    };
    eprintln!(
        "{}",
        report::sweep::row(&name, &step.result, standing.as_str())
    );
    let cell = Cell {
        values: values.to_vec(),
        label: name,
        standing: standing.into(),
        step: Some(step.result),
        why: Some(why),
    };
    Ok(Some((cell, standing == Standing::Collapsed)))
}

pub async fn run_sweep(
    cfg: &Config,
    axes: &[Axis],
    opts: &RampOptions,
) -> anyhow::Result<SweepDoc> {
    eprintln!(
        "sweep: {}; budget: {}",
        axes.iter()
            .map(|a| format!("{} over {} values", a.name, a.values.len()))
            .collect::<Vec<_>>()
            .join(" × "),
        opts.budget.describe()
    );
    let environment = Environment {
        budget: Some(opts.budget.clone()),
        sweep: Some(axes.to_vec()),
        ..step::environment::describe(cfg, &opts.step)
    };
    let history = opts
        .history
        .as_deref()
        .map(store::History::open)
        .transpose()?;
    let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
    let title = format!("{} [sweep {}]", cfg.file.display(), names.join(" × "));
    let id = match &history {
        Some(h) => Some(h.start_run(&step::now_rfc3339(), &title, &environment)?),
        None => None,
    };
    let mut cells = Vec::new();
    let mut interrupted = false;
    let mut dead_row: Option<Vec<f64>> = None;
    for values in grid(axes) {
        let row = values[..values.len() - 1].to_vec();
        let cell = if interrupted || dead_row.as_ref() == Some(&row) {
            skipped(&values, &label(axes, &values))
        } else {
            match point(cfg, axes, &values, opts).await {
                Ok(Some((cell, collapsed))) => {
                    if collapsed {
                        dead_row = Some(row);
                    }
                    cell
                }
                Ok(None) => {
                    eprintln!(
                        "interrupted: the finished steps are kept; the run is marked interrupted"
                    );
                    interrupted = true;
                    skipped(&values, &label(axes, &values))
                }
                Err(e) => {
                    if let (Some(h), Some(id)) = (&history, id) {
                        h.fail_run(id, &format!("{e:#}"))?;
                    }
                    return Err(e);
                }
            }
        };
        if let (Some(h), Some(id)) = (&history, id) {
            h.add_step(id, cells.len(), &cell)?;
        }
        cells.push(cell);
    }
    let doc = document(
        &cfg.file.display().to_string(),
        environment,
        interrupted,
        cells,
    );
    if let (Some(h), Some(id)) = (&history, id) {
        let status = if interrupted { "interrupted" } else { "done" };
        h.finish_run(id, status, &serde_json::json!({ "sweep": doc.sweep.rows }))?;
    }
    finish(&doc, opts.out.as_deref())?;
    Ok(doc)
}

/// The verdict on the terminal; the files in `out`.
pub fn finish(doc: &SweepDoc, out: Option<&std::path::Path>) -> anyhow::Result<()> {
    for line in report::sweep::verdict_lines(doc) {
        eprintln!("{line}");
    }
    if let Some(dir) = out {
        let md = report::sweep::markdown(doc);
        let html = report::sweep::html(doc);
        let json = result::to_file_json(&words::json::sweep(doc));
        crate::ladder::write_files(dir, &json, &md, &html)?;
    }
    Ok(())
}

/// A sweep re-read from the history: its points and verdict again, the files in `out`.
pub fn rerender(
    config: &str,
    environment: Environment,
    finished: bool,
    cells: Vec<Cell>,
    out: Option<&std::path::Path>,
) -> anyhow::Result<SweepDoc> {
    let sweep = document(config, environment, !finished, cells);
    for c in &sweep.sweep.cells {
        match &c.step {
            Some(s) => eprintln!("{}", report::sweep::row(&c.label, s, c.standing.as_str())),
            None => eprintln!("  {:<28} skipped", c.label),
        }
    }
    finish(&sweep, out)?;
    Ok(sweep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_parse_with_their_mistakes_named() {
        let a = parse_axis("messages=50,100,150").unwrap();
        assert_eq!((a.name.as_str(), a.values.len()), ("messages", 3));
        assert!(parse_axis("mesages=1,2")
            .unwrap_err()
            .contains("not an axis"));
        assert!(parse_axis("messages=2,1").unwrap_err().contains("increase"));
        assert!(parse_axis("messages").unwrap_err().contains("NAME=V"));
        assert!(parse_axis("concurrency=0.5,2")
            .unwrap_err()
            .contains("whole"));
        assert_eq!(parse_set("pad=1024").unwrap(), ("pad".to_string(), 1024.0));
        assert!(parse_set("pad=1,2").unwrap_err().contains("one value"));
    }

    #[test]
    fn a_grid_runs_the_last_axis_fastest() {
        let g = grid(&[
            Axis {
                name: "a".into(),
                values: vec![1.0, 2.0],
            },
            Axis {
                name: "b".into(),
                values: vec![10.0, 20.0, 30.0],
            },
        ]);
        assert_eq!(g.len(), 6);
        assert_eq!(g[0], vec![1.0, 10.0]);
        assert_eq!(g[2], vec![1.0, 30.0]);
        assert_eq!(g[3], vec![2.0, 10.0]);
    }
}
