//! `plimsoll history` and `plimsoll report RUN`: the recorded runs.

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
        println!(
            "{:>5}  {:<20}  {:<13}  {:>5}  {:>8}  {}",
            r.id, r.started, r.status, r.steps, ceiling, r.config
        );
    }
    Ok(0)
}

pub fn report(db: &std::path::Path, run: i64, out: Option<&std::path::Path>) -> anyhow::Result<u8> {
    let h = store::History::open(db)?;
    if let Some(doc) = h.run(run)?.filter(|d| d["environment"]["kind"] == "soak") {
        // A soak: its series from the history, judged again.
        let doc = ::soak::from_history(&h, run, doc)?;
        eprintln!(
            "verdict: {}",
            doc["analysis"]["headline"].as_str().unwrap_or("")
        );
        if let Some(dir) = out {
            ::soak::write_reports(&doc, dir)?;
        }
        return Ok(0);
    }
    ::ramp::ladder::report_from_history(db, run, out)?;
    Ok(0)
}
