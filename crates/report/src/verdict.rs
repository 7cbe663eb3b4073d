//! The verdict of a ladder in words: the one-sentence headline first, then the lines
//! that back it (budget, wall, throughput knee and plateau, collapse, USL, projection).

use analysis::budget::num;
use result::ladder::{Collapse, KneeReading, LadderAnalysis, LadderDoc, LogFinding, Plateau};
use result::words::{count, sessions, Unit};
use result::Confidence;

/// The headline: what the system holds, where it is over budget, its wall, collapse.
pub fn headline(doc: &LadderDoc) -> String {
    // The level's own unit is the live view's to say: a call's first seconds carry no
    // voice figures yet.
    if first_level_running(doc) {
        return "none yet — the first level is running; a verdict needs a level that has finished"
            .into();
    }
    match doc.ladder() {
        Some(a) => match &a.verdict {
            Some(v) => words::headline::of(v),
            // Runs recorded before budgets had only a ceiling.
            None => ceiling_line(a),
        },
        None => ceiling_line(&LadderAnalysis::default()),
    }
}

/// The verdict of a ladder document, a line each, the headline first.
pub fn verdict_lines(doc: &LadderDoc) -> Vec<String> {
    let mut out = vec![format!("verdict: {}", headline(doc))];
    out.extend(detail_lines(doc));
    out
}

/// A live page's document while its first level runs: no level has finished to judge.
fn first_level_running(doc: &LadderDoc) -> bool {
    doc.running.is_some() && doc.ladder().is_none()
}

/// What is said under a ladder's headline: the verdict's lines, and apart from them the
/// capacity projection's working (a projection, not a measurement), None without one.
pub struct Details {
    pub lines: Vec<String>,
    pub capacity: Option<Vec<String>>,
}

/// Every line under the headline, as the terminal says them: the verdict's, then the
/// capacity projection under its heading, indented.
pub fn detail_lines(doc: &LadderDoc) -> Vec<String> {
    let Details {
        mut lines,
        capacity,
    } = details(doc);
    if let Some(c) = capacity {
        lines.push("capacity projection (not a measurement):".into());
        lines.extend(c.iter().map(|l| format!("  {l}")));
    }
    lines
}

/// What is said under the headline, the verdict's lines and the projection apart.
pub fn details(doc: &LadderDoc) -> Details {
    if first_level_running(doc) {
        // Nothing judged yet.
        return Details {
            lines: Vec::new(),
            capacity: None,
        };
    }
    let empty = LadderAnalysis::default();
    let a = doc.ladder().unwrap_or(&empty);
    let mut out = Vec::new();
    // A verdict with labelled lines says them, in its order; older runs the old way.
    let labelled = a.verdict.as_ref().map(words::headline::lines_of);
    if let Some(lines) = labelled.filter(|l| !l.is_empty()) {
        out.extend(lines.iter().map(|l| format!("{}: {}", l.label, l.text)));
    } else if let Some(v) = &a.verdict {
        // A run recorded before its verdict kept the budget: its environment's, if any.
        let judged = words::verdict::judged(v, doc.budget());
        if !judged.is_empty() {
            out.push(format!("budget: {judged}"));
        }
        out.push(format!("wall: {}", words::wall::text(&v.wall)));
        out.extend(v.plateau.as_ref().map(plateau_line));
        for n in &v.notes {
            out.push(format!("note: {}", words::verdict::note(n)));
        }
    }
    // Calls are judged by their replies and audio: no knee of a rate of turns, no USL.
    let u = Unit::of(&doc.steps);
    let calls = u.is_calls();
    if !calls {
        out.push(knee_line(&a.knee));
    }
    let mut tail: Vec<String> = a.collapse.iter().map(|c| collapse_line(c, u)).collect();
    tail.extend(harness_line(&a.harness_bound_steps));
    tail.extend(provider_line(doc));
    if !calls {
        tail.push(words::usl::line(&a.usl));
    }
    tail.extend(log_lines(a.log.as_deref().unwrap_or_default(), u));
    out.extend(tail);
    Details {
        lines: out,
        capacity: a.capacity.as_ref().map(words::capacity::working),
    }
}

/// The provider's limits, and at each level where it refused calls or kept them waiting:
/// how many, the retries they cost, and the wait for a slot.
fn provider_line(doc: &LadderDoc) -> Option<String> {
    let limits = doc
        .steps
        .iter()
        .find_map(|s| s.provider.as_ref().map(|p| p.limits.as_str()))?;
    let per: Vec<String> = doc
        .steps
        .iter()
        .filter_map(|s| {
            let p = s.provider.as_ref()?;
            let refused: u64 = p.refused.values().sum();
            let wait = p.queue_wait_p99_ms;
            if refused == 0 && wait < 1.0 {
                return None;
            }
            let slots = if wait >= 1.0 {
                format!(" p99 wait for a slot {} ms", num(wait))
            } else {
                String::new()
            };
            let refusals = if refused > 0 {
                format!(
                    " {} refused ({:.0} %), the SUT resent {} (amplification {}×)",
                    count(refused, "call"),
                    p.refused_share * 100.0,
                    p.retried,
                    num(p.amplification),
                )
            } else {
                String::new()
            };
            let sep = if refused > 0 && wait >= 1.0 { "," } else { "" };
            Some(format!("at {}:{refusals}{sep}{slots}", s.concurrency))
        })
        .collect();
    let what = if per.is_empty() {
        "no call refused or kept waiting at any level".to_string()
    } else {
        per.join("; ")
    };
    Some(format!("provider: {limits} — {what}"))
}

/// The SUT's own log: kinds that began under load, each with its level; the noise every
/// level printed summed in one line.
fn log_lines(all: &[LogFinding], u: Unit) -> Vec<String> {
    let (noise, load): (Vec<&LogFinding>, Vec<&LogFinding>) = all.iter().partition(|f| f.at_lowest);
    let mut out: Vec<String> = load
        .iter()
        .take(5)
        .map(|f| {
            format!(
                "SUT log: {} × {} `{}` at {}, {} (e.g. `{}`)",
                f.count_at_first,
                f.level,
                f.message,
                u.level(f.first_at),
                if f.below_cut {
                    "not among the kinds kept below"
                } else {
                    "none below"
                },
                f.example
            )
        })
        .collect();
    if load.len() > 5 {
        out.push(format!("SUT log: {} more kinds of warning or error began under load (result.json, analysis.log)", load.len() - 5));
    }
    if let Some(first) = noise.first() {
        out.push(format!(
            "SUT log: {} of warning or error already at the lowest level (not load's doing), e.g. `{}`",
            crate::words::count(noise.len() as u64, "kind"),
            first.message
        ));
    }
    out
}

fn ceiling_line(a: &LadderAnalysis) -> String {
    match a.ceiling {
        Some(c) if a.ceiling_is_harness_bound => format!(
            "ceiling: {} — but that step was HARNESS-BOUND: Plimsoll was the bottleneck, not the SUT",
            sessions(c as f64)
        ),
        Some(c) => format!(
            "ceiling: {} (the last step without a collapse)",
            sessions(c as f64)
        ),
        None => "ceiling: none — the first step already collapsed".into(),
    }
}

fn plateau_line(p: &Plateau) -> String {
    format!(
        "throughput plateau: {} turns/s from {} over {} levels ({}){}",
        num(p.turns_per_s),
        sessions(p.from),
        p.levels,
        p.confidence,
        if p.retrograde {
            "; it falls after its peak (retrograde)"
        } else {
            ""
        }
    )
}

fn collapse_line(c: &Collapse, u: Unit) -> String {
    format!(
        "collapse at {}: {} — {}",
        u.level(c.concurrency),
        c.outcome,
        words::cause::collapse(c).unwrap_or_default()
    )
}

fn harness_line(steps: &[usize]) -> Option<String> {
    let steps: Vec<String> = steps.iter().map(|s| s.to_string()).collect();
    (!steps.is_empty()).then(|| {
        format!(
            "harness-bound steps (Plimsoll was the bottleneck there, not the SUT): {}",
            steps.join(", ")
        )
    })
}

fn knee_line(k: &KneeReading) -> String {
    let k = match k {
        KneeReading::Insufficient { .. } => return "knee: not enough steps".into(),
        KneeReading::Scaling { .. } => {
            return "throughput knee: none within the ladder — throughput kept scaling".into()
        }
        KneeReading::Found(k) => k,
    };
    match k.confidence {
        Confidence::Insufficient => "knee: not enough steps".into(),
        Confidence::None => {
            "throughput knee: none within the ladder — throughput kept scaling".into()
        }
        // Runs recorded before the throughput knee: the latency knee's words.
        Confidence::Flat => format!(
            "knee: none within the ladder — latency inflation stayed within 15 % up to {}",
            sessions(k.from)
        ),
        Confidence::AtTheEnd => format!(
            "knee: {} or beyond — latency turns at the last level; widen the ladder",
            num(k.from)
        ),
        conf => format!(
            "throughput knee: between {} and {} sessions ({conf}{})",
            num(k.from),
            num(k.to),
            k.method.map_or(String::new(), |m| format!(
                "; {}",
                words::verdict::knee_method(m)
            ))
        ),
    }
}
