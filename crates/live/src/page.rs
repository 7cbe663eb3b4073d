//! The live page: a shell that asks the server for its parts every second — the level
//! running now, and the report's own body (verdict so far, charts, table) over the steps
//! so far with the running level among them — and stops when the run has ended. No
//! script or style from elsewhere: it works offline.

use crate::board::State;
use report::svg::esc;

/// The page's shell.
pub fn shell(s: &State) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plimsoll live: {run}</title><style>{style}
#now{{font-size:15px;border:1px solid #ddd;padding:8px 12px;margin:8px 0;background:#fafafa}}
#now b{{font-size:17px}} #state{{color:#555}}</style></head><body>
<p id="state">live: waiting for the first figures…</p><div id="now"></div><div id="report"></div>
<script>{SCRIPT}</script></body></html>
"#,
        run = esc(&s.run),
        style = report::html::style(),
    )
}

/// Polls `/parts` every second; after the last answer, says the run ended.
const SCRIPT: &str = r#"
let seen = 0, missed = 0;
async function poll() {
  let p;
  try {
    const r = await fetch('/parts', {cache: 'no-store'});
    p = await r.json();
  } catch (e) {
    // A busy moment is not the end: five missed seconds in a row are.
    missed += 1;
    if (missed < 5) { setTimeout(poll, 1000); return; }
    document.getElementById('state').textContent = seen
      ? 'live: the run has ended and its server closed; its final report is in its --out directory or `plimsoll history`'
      : 'live: no answer from the run';
    return;
  }
  seen += 1; missed = 0;
  document.getElementById('state').textContent = p.state;
  document.getElementById('now').innerHTML = p.now;
  if (p.report) document.getElementById('report').innerHTML = p.report;
  if (!p.done) setTimeout(poll, 1000);
}
poll();
"#;

/// The parts the page asks for, as JSON: a state line, the level running now, the
/// report's body so far, and whether the run has ended.
pub fn parts(s: &State) -> serde_json::Value {
    let bodies: Vec<String> = match &s.soak {
        Some(soak) => vec![report::soak::body(soak)],
        None => s.so_far().iter().map(report::html::body).collect(),
    };
    let state = match (&s.done, &s.level) {
        (Some(_), _) if s.shard.is_some() => {
            "this shard has ended: its last figures (the run's own come from `plimsoll merge`)"
                .to_string()
        }
        (Some(_), _) => "the run has ended: its final report".to_string(),
        (None, Some(_)) => format!(
            "live: {} finished so far; updated every second",
            result::words::count(s.steps.len() as u64, "step")
        ),
        (None, None) => "live: between levels".into(),
    };
    serde_json::json!({
        "state": state,
        "now": now(s),
        "report": bodies.join("<hr>"),
        "done": s.done.is_some(),
    })
}

/// The level running now, in one panel.
fn now(s: &State) -> String {
    let Some(l) = &s.level else {
        return String::new();
    };
    let Some(t) = l.ticks.last() else {
        return format!(
            "<b>level {}</b>: starting",
            esc(&s.unit.level(l.concurrency))
        );
    };
    let recent = l
        .ticks
        .iter()
        .rev()
        .find(|x| t.t_s - x.t_s >= 5.0)
        .or(l.ticks.first());
    let rate = recent.and_then(|r| {
        let dt = t.t_s - r.t_s;
        (dt > 0.0).then(|| {
            (
                (t.turns - r.turns) as f64 / dt,
                (t.cpu_sec - r.cpu_sec) / dt,
            )
        })
    });
    let mut cells = vec![
        format!("{:.0} s in", t.t_s),
        format!("{} in flight", t.in_flight),
        format!("{} done, {} failed", t.sessions_ok, t.sessions_failed),
        result::words::count(t.turns, "turn"),
    ];
    cells.extend(rate.map(|(turns, cores)| match t.unsampled {
        true => format!("{turns:.2} turns/s over the last 5 s"),
        false => {
            let cap = s.cap_cores.map_or(String::new(), |c| {
                format!(" ({:.0} % of the cap)", 100.0 * cores / c)
            });
            format!("{turns:.2} turns/s, CPU {cores:.2} cores{cap} over the last 5 s")
        }
    }));
    cells.push(match t.unsampled {
        true => "the SUT is not sampled (a shard: its figures come with the merge)".into(),
        false => format!(
            "RSS {:.1} MB, {}",
            t.rss_bytes as f64 / 1048576.0,
            result::words::count(t.threads, "thread")
        ),
    });
    cells.extend(t.probe_ms.map(|p| format!("probe {p:.0} ms")));
    format!(
        "<b>level {}{}</b> · {}",
        esc(&s.unit.level(l.concurrency)),
        if l.again { " (again)" } else { "" },
        esc(&cells.join(" · "))
    )
}
