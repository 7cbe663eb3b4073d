//! A soak's reports: `soak.md` (the verdict per resource and the rule) and `soak.html`
//! (the same, with the series against time: RSS, threads, open files, CPU, sessions).

use crate::grid::{strong, Col, Grid};
use crate::svg::esc;
use crate::timeline::{render, Timeline};
use result::soak::{SoakDoc, SoakSample};

fn f(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| {
        if x.abs() >= 100.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.2}")
        }
    })
}

/// The verdict per resource as a Markdown table.
fn leak_table(doc: &SoakDoc) -> Grid {
    let mut g = Grid::new(&[
        Col::left("resource").short(),
        Col::left("verdict").short(),
        Col::right("Sen slope / h").short(),
        Col::right("per 1,000 sessions").short(),
        Col::left("OLS / h (95 % CI)").short(),
        Col::right("Mann–Kendall p").short(),
        Col::left("start → end of load → end of drain").short(),
        Col::right("drain gave back").short(),
    ]);
    for l in &doc.analysis.leaks {
        let ci = l.ols_ci95_per_hour.map_or("—".into(), |c| {
            format!(
                "{} ({} – {})",
                f(l.ols_per_hour),
                f(Some(c[0])),
                f(Some(c[1]))
            )
        });
        let p = l.mann_kendall_p.map_or("—".into(), |p| match p < 0.01 {
            true => format!("{p:.1e}"),
            false => format!("{p:.2}"),
        });
        g.row(vec![
            l.resource.as_str().into(),
            strong(words::soak::verdict(l.verdict).to_string()),
            f(l.sen_per_hour).into(),
            f(l.sen_per_1000_sessions).into(),
            ci.into(),
            p.into(),
            format!(
                "{} → {} → {}",
                f(l.start),
                f(l.end_of_load),
                f(l.end_of_drain)
            )
            .into(),
            l.drain_return
                .map_or("—".into(), |r| format!("{:.0} %", r * 100.0))
                .into(),
        ]);
    }
    g
}

fn plan(doc: &SoakDoc) -> String {
    let p = &doc.plan;
    let r = doc.result.as_ref();
    let json = crate::json_num;
    let count = |k: fn(&result::StepResult) -> u64| r.map_or("null".into(), |r| k(r).to_string());
    format!(
        "{} s of load at {} then {} s of drain, sampled every {} s; the first {} s left out of the verdict. {} completed, {} failed; outcome {}; status {}.",
        json(p.duration_s),
        match p.rate {
            Some(rate) => format!("{} a second", crate::words::count_f(rate, "session")),
            None => format!("{} at a time", crate::words::count(p.concurrency as u64, "session")),
        },
        json(p.drain_s),
        json(p.every_s),
        json(p.warmup_s),
        r.map_or("null sessions".into(), |r| crate::words::count(r.sessions_ok, "session")),
        count(|r| r.sessions_failed),
        r.map_or("—", |r| r.outcome.as_str()),
        doc.status,
    )
}

pub fn markdown(doc: &SoakDoc) -> String {
    let a = &doc.analysis;
    format!(
        "# Plimsoll soak — {}\n\n**Verdict: {}**\n\n{}\n\n{}\n*The rule:* {}.\n\nUnits: RSS and cgroup memory in KB, threads and open files in counts. The series is in soak.json (`series`) and in the history.\n",
        doc.config,
        words::soak::headline(a),
        plan(doc),
        leak_table(doc).markdown(),
        words::soak::rule(a),
    )
}

/// The soak's report page.
pub fn html(doc: &SoakDoc) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll soak</title><style>
body{{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}}
section{{display:inline-block;vertical-align:top;margin:0 16px 20px 0;width:560px}}
.t{{font:bold 13px sans-serif}} .a{{font:10px sans-serif;fill:#555}} .m{{font:10px sans-serif}} .how{{font-size:12px;color:#555;margin:2px 0}}
.verdict{{font-size:17px;border-left:5px solid #36c;padding:6px 12px;background:#f4f7fc}}
table{{border-collapse:collapse;font-size:12px;margin-top:8px}} td,th{{border:1px solid #ddd;padding:2px 6px;text-align:right}}
</style></head><body>{}</body></html>
"#,
        body(doc)
    )
}

/// What the soak's page holds: the verdict, the plan, the leak table, the series' charts.
pub fn body(doc: &SoakDoc) -> String {
    let series = &doc.series;
    let pts = |k: fn(&SoakSample) -> Option<f64>, scale: f64| -> Vec<(f64, f64)> {
        series
            .iter()
            .filter_map(|s| Some((s.t_s, k(s)? * scale)))
            .collect()
    };
    let drain_from = series.iter().find(|s| s.phase == "drain").map(|s| s.t_s);
    let warmup_s = doc.analysis.warmup_s;
    let slope_of = |resource: &str, scale: f64| {
        doc.analysis
            .leaks
            .iter()
            .find(|l| l.resource == resource)
            .and_then(|l| l.sen_per_hour)
            .map(|h| h / 3600.0 * scale)
    };
    let cpu: Vec<(f64, f64)> = pts(|s| Some(s.cpu_s), 1.0)
        .windows(2)
        .map(|w| {
            (
                w[1].0,
                ((w[1].1 - w[0].1) / (w[1].0 - w[0].0).max(1e-9) * 100.0).max(0.0),
            )
        })
        .collect();
    let charts = [
        Timeline { title: "RSS", unit: "MB", how: "The whole process tree's resident memory. A floor that keeps rising under steady load is a leak; the dashed line is the slope the verdict found.", points: pts(|s| Some(s.rss_kb as f64), 1.0 / 1024.0), drain_from, warmup_s, slope: slope_of("RSS", 1.0 / 1024.0) },
        Timeline { title: "OS threads", unit: "threads", how: "Threads that pile up with sessions completed are a thread kept per call or per session.", points: pts(|s| Some(s.threads as f64), 1.0), drain_from, warmup_s, slope: slope_of("threads", 1.0) },
        Timeline { title: "Open files", unit: "fds", how: "Descriptors that only grow: connections or files not closed.", points: pts(|s| Some(s.fds as f64), 1.0), drain_from, warmup_s, slope: slope_of("open files", 1.0) },
        Timeline { title: "CPU", unit: "% of a core", how: "CPU between samples; steady under steady load, near zero in the drain.", points: cpu, drain_from, warmup_s, slope: None },
        Timeline { title: "Probe latency", unit: "ms", how: "The slowest answer of the responsiveness probe (--probe PATH) between samples: the SUT's lag as a client sees it, drifting up over a soak when something accumulates. Empty without --probe.", points: pts(|s| s.probe_max_ms, 1.0), drain_from, warmup_s, slope: None },
        Timeline { title: "Sessions completed", unit: "sessions", how: "The churn: a straight line is a steady rate.", points: pts(|s| Some(s.sessions_done as f64), 1.0), drain_from, warmup_s, slope: None },
    ];
    let body: String = charts
        .iter()
        .map(|c| format!("<section>{}</section>", render(c)))
        .collect();
    let table = leak_table(doc).html();
    format!(
        r#"<h1>Plimsoll soak</h1><p class="verdict"><b>Verdict:</b> {}</p><p>{}</p><p>{}</p>{}{}<p class="how"><b>The rule:</b> {}.</p>"#,
        esc(&words::soak::headline(&doc.analysis)),
        esc(&doc.config),
        esc(&plan(doc)),
        table,
        body,
        esc(&words::soak::rule(&doc.analysis)),
    )
}
