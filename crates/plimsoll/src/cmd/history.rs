//! `plimsoll history` and `plimsoll report RUN`: the recorded runs, each re-rendered by
//! its kind — a ladder, a sweep, a soak, or one side of a comparison — from what the
//! history holds (the one place that tells the kinds apart).

pub fn list(db: &std::path::Path, limit: usize) -> anyhow::Result<u8> {
    if !db.exists() {
        anyhow::bail!(
            "no history at {}; `plimsoll ramp` records one there",
            db.display()
        );
    }
    let h = store::History::open(db)?;
    println!(
        "{:>5}  {:<20}  {:<13}  {:>5}  {:>8}  config",
        "run", "started", "status", "steps", "ceiling"
    );
    for r in h.runs(limit)? {
        let ceiling = r.ceiling.map_or("—".to_string(), |c| c.to_string());
        // A failed run says why, its reason's first line after the config.
        let why = r.reason.as_deref().map_or(String::new(), |w| {
            format!("  ({})", w.lines().next().unwrap_or_default())
        });
        println!(
            "{:>5}  {:<20}  {:<13}  {:>5}  {:>8}  {}{why}",
            r.id, r.started, r.status, r.steps, ceiling, r.config
        );
    }
    Ok(0)
}

pub fn report(db: &std::path::Path, run: i64, out: Option<&std::path::Path>) -> anyhow::Result<u8> {
    let h = store::History::open(db)?;
    let doc = h.run(run)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no run {run} in {}; `plimsoll history` lists the runs",
            db.display()
        )
    })?;
    let unreadable = |e: serde_json::Error| {
        anyhow::anyhow!(
            "run {run} in {} cannot be read ({e}): was it recorded by another version of Plimsoll?",
            db.display()
        )
    };
    if doc["environment"]["kind"] == "soak" {
        // A soak: its series from the history, judged again.
        let stored: ::soak::Stored = serde_json::from_value(doc).map_err(unreadable)?;
        let doc = ::soak::from_history(&h, run, stored)?;
        eprintln!("verdict: {}", words::soak::headline(&doc.analysis));
        if let Some(dir) = out {
            ::soak::write_reports(&doc, dir)?;
        }
    } else if doc["environment"]["sweep"].is_array() {
        let stored: SweepRun = serde_json::from_value(doc).map_err(unreadable)?;
        ::ramp::sweep::rerender(
            &stored.config,
            stored.environment,
            stored.status == "done",
            stored.steps,
            out,
        )?;
    } else {
        let ladder = serde_json::from_value(doc).map_err(unreadable)?;
        ::ramp::ladder::rerender(ladder, out)?;
    }
    Ok(0)
}

/// What the history holds of a sweep: its environment (with the axes) and its cells.
#[derive(serde::Deserialize)]
struct SweepRun {
    config: String,
    environment: result::environment::Environment,
    status: String,
    steps: Vec<result::sweep::Cell>,
}
