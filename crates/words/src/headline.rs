//! The verdict in words: a headline read in one breath ("holds 11–12 sessions · wall:
//! CPU (1-core cap full at 32) · no collapse up to 64"), then short labelled lines, one
//! fact each — the budget, the line's spread, the wall's evidence, the findings, the
//! machine, the plateau, what one session costs. The same order everywhere it is shown.

use crate::pct;
use result::budget::num;
use result::facts::Machine;
use result::ladder::{Labelled, Plateau, Verdict};
use result::words::Unit;

/// The headline of a verdict: worded from its facts, or as recorded when it was made
/// before its wall was a fact.
pub fn of(v: &Verdict) -> String {
    match v.wall.fact {
        Some(_) => headline(v),
        None => v.recorded_headline.clone(),
    }
}

/// The lines under a verdict's headline: worded from its facts, or as recorded.
pub fn lines_of(v: &Verdict) -> Vec<Labelled> {
    match v.wall.fact {
        Some(_) => lines(v),
        None => v.recorded_lines.clone(),
    }
}

/// The first line: what holds, the wall, the collapse; a busy machine first when one
/// made a step contaminated.
pub fn headline(v: &Verdict) -> String {
    let busy = v.machine.as_ref().filter(|m| m.contaminated);
    let holds = match (&v.line, v.holds) {
        (Some(l), _) if l.high > l.low => format!("{}–{} {}", l.low, l.high, v.unit.many()),
        (_, Some(h)) => v.unit.level(h),
        (_, None) => String::new(),
    };
    let holds = match (holds.is_empty(), busy.is_some()) {
        (true, _) => "no level within budget".to_string(),
        (false, true) => format!("holds at least {holds}"),
        (false, false) => format!("holds {holds}"),
    };
    let collapse = match (v.collapse, v.top, &v.collapse_cause) {
        (Some(c), _, Some(why)) => {
            format!("collapse at {c}: {}", crate::wall::worker_refusal(why))
        }
        (Some(c), _, None) => format!("collapse at {c}"),
        (None, Some(t), _) => format!("no collapse up to {t}"),
        (None, None, _) => "no steps".into(),
    };
    let line = format!(
        "{holds} · wall: {} · {collapse}",
        crate::wall::short(&v.wall)
    );
    match busy {
        Some(m) => format!("machine busy {} — {line}", busy_at(m)),
        None => line,
    }
}

/// The busy machine in the headline's few words: where, and the share others took (of
/// the SUT's cores, or of Plimsoll's when only those were taken and Plimsoll fell behind).
fn busy_at(m: &Machine) -> String {
    let level = m.level;
    match m.starved {
        Some(h) => format!("at {level} (others took {} of Plimsoll's cores)", pct(h)),
        None => format!(
            "at {level} (others took {} of the SUT's cores)",
            pct(m.share)
        ),
    }
}

fn labelled(label: &str, text: String) -> Labelled {
    Labelled {
        label: label.into(),
        text,
    }
}

/// The lines under the headline, in their order.
pub fn lines(v: &Verdict) -> Vec<Labelled> {
    let mut out = vec![labelled("budget", crate::verdict::budget(v))];
    if let Some(l) = &v.line {
        out.push(labelled("line", crate::verdict::line(l)));
    }
    out.push(labelled("wall", crate::wall::text(&v.wall)));
    out.extend(
        v.findings
            .iter()
            .map(|f| labelled("finding", crate::findings::finding(f))),
    );
    out.extend(
        v.machine
            .iter()
            .map(|m| labelled("machine", machine(m, v.unit))),
    );
    out.extend(
        v.plateau
            .iter()
            .map(|p| labelled("plateau", plateau(p, v.unit))),
    );
    out.extend(
        v.notes
            .iter()
            .map(|n| labelled("note", crate::verdict::note(n))),
    );
    out.extend(
        v.first_level_cost
            .iter()
            .map(|c| labelled("cost", crate::verdict::first_cost(c))),
    );
    out
}

fn plateau(p: &Plateau, u: Unit) -> String {
    format!(
        "throughput {} over {} levels ({}){}",
        crate::wall::flat(&result::wall::Flat::of(p), u),
        p.levels,
        p.confidence,
        match p.retrograde {
            true => "; it falls after its peak (retrograde)",
            false => "",
        }
    )
}

/// What other processes took of the cores, where it was measured.
fn machine(m: &Machine, u: Unit) -> String {
    let reran = match m.reran.is_empty() {
        true => String::new(),
        false => {
            let levels: Vec<String> = m.reran.iter().map(|l| l.to_string()).collect();
            format!("; run again after a pause: {}", levels.join(", "))
        }
    };
    let level = u.level(m.level);
    match (m.contaminated, m.starved, &m.quota) {
        (true, Some(h), _) => format!(
            "busy: other processes took {} of Plimsoll's own cores at {level} and it fell behind — those levels describe the machine, not the SUT (run again on a quiet machine){reran}",
            pct(h)
        ),
        (true, None, _) => format!(
            "busy: other processes took {} of the SUT's cores at {level}{} — the line is a floor, not the system's (run again on a quiet machine){reran}",
            pct(m.share),
            m.wait_ms.map_or(String::new(), |w| format!(
                ", and its threads waited {} ms a second for a CPU",
                num(w)
            ))
        ),
        // Under a quota over more cores than it, others' time on the spare cores is not
        // the SUT's loss: said so, with how the cap was held.
        (false, _, Some(how)) => format!(
            "quiet: other processes took at most {} of the CPU the SUT could have used (under {}, their time on what the quota leaves idle is not its loss){reran}",
            pct(m.share),
            crate::findings::cap_held(how)
        ),
        (false, _, None) => format!(
            "quiet: other processes took at most {} of the SUT's cores{reran}",
            pct(m.share)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::facts::CapHeld;
    use result::wall::WallFact;

    #[test]
    fn a_verdict_made_before_its_facts_keeps_its_words_and_one_made_after_is_worded() {
        let mut v = Verdict {
            recorded_headline: "holds 8 sessions · wall: as said then".into(),
            recorded_lines: vec![labelled("wall", "as said then".into())],
            holds: Some(8),
            top: Some(16),
            ..Verdict::default()
        };
        assert_eq!(of(&v), v.recorded_headline);
        assert_eq!(lines_of(&v), v.recorded_lines);
        v.wall.fact = Some(WallFact::OutOfThreads { at: 16 });
        assert_eq!(
            of(&v),
            "holds 8 sessions · wall: threads (none left at 16) · no collapse up to 16"
        );
        let words = lines_of(&v);
        assert_eq!(
            words[1],
            labelled(
                "wall",
                "threads — the SUT could start no more threads at 16 calls".into()
            )
        );
    }

    #[test]
    fn the_machine_is_said_as_busy_quiet_or_quiet_under_a_quota() {
        let m = Machine {
            level: 16,
            share: 0.3,
            contaminated: true,
            starved: None,
            wait_ms: Some(60.0),
            quota: None,
            reran: vec![16, 32],
        };
        assert_eq!(machine(&m, Unit::Session), "busy: other processes took 30 % of the SUT's cores at 16 sessions, and its threads waited 60 ms a second for a CPU — the line is a floor, not the system's (run again on a quiet machine); run again after a pause: 16, 32");
        assert_eq!(busy_at(&m), "at 16 (others took 30 % of the SUT's cores)");
        let starved = Machine {
            starved: Some(0.5),
            ..m.clone()
        };
        assert_eq!(
            busy_at(&starved),
            "at 16 (others took 50 % of Plimsoll's cores)"
        );
        let quiet = Machine {
            contaminated: false,
            share: 0.04,
            reran: Vec::new(),
            quota: Some(CapHeld {
                cores: 1.0,
                on: Some(14.0),
            }),
            ..m
        };
        assert_eq!(machine(&quiet, Unit::Call), "quiet: other processes took at most 4 % of the CPU the SUT could have used (under a 1-core quota over 14 cores, their time on what the quota leaves idle is not its loss)");
    }
}
