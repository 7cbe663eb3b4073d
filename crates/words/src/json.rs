//! A document as its readers get it (`--json`, `result.json`, the event stream): its facts
//! as they are stored, and beside them the words this module's siblings make of them: a
//! verdict's `headline` and `lines`, its wall's `text` and `short`, a capacity
//! projection's `working`, a soak's `headline`, `rule` and each leak's `why`, a sweep
//! row's `sentence`. The history
//! stores the facts alone; these words are made again each time a document is written.

use crate::{headline, wall};
use result::arms::ArmsDoc;
use result::ladder::{LadderDoc, Verdict};
use result::soak::{SoakAnalysis, SoakDoc};
use result::sweep::SweepDoc;
use serde_json::{json, Value};

/// A ladder's document with its verdict's words.
pub fn ladder(doc: &LadderDoc) -> Value {
    let mut v = serde_json::to_value(doc).expect("a document serializes");
    let Some(a) = doc.ladder() else {
        return v;
    };
    if let Some(verdict) = &a.verdict {
        v["analysis"]["verdict"] = self::verdict(verdict);
    }
    if let Some(c) = &a.capacity {
        v["analysis"]["capacity"]["working"] = json!(crate::capacity::working(c));
    }
    v
}

/// Arms side by side, each arm's verdict with its words.
pub fn arms(doc: &ArmsDoc) -> Value {
    let mut v = serde_json::to_value(doc).expect("a document serializes");
    v["arms"] = doc.arms.iter().map(ladder).collect();
    v
}

/// A soak's document with its analysis's words.
pub fn soak(doc: &SoakDoc) -> Value {
    let mut v = serde_json::to_value(doc).expect("a document serializes");
    v["analysis"] = soak_analysis(&doc.analysis);
    v
}

/// A sweep's document with each row's cliff in words (`sentence`).
pub fn sweep(doc: &SweepDoc) -> Value {
    let mut v = serde_json::to_value(doc).expect("a document serializes");
    for (i, r) in doc.sweep.rows.iter().enumerate() {
        v["sweep"]["rows"][i]["sentence"] = json!(crate::sweep::row(&doc.sweep, r));
    }
    v
}

/// A soak's analysis with its words: `headline`, `rule`, and each leak's `why`.
pub fn soak_analysis(a: &SoakAnalysis) -> Value {
    let mut v = serde_json::to_value(a).expect("an analysis serializes");
    v["headline"] = json!(crate::soak::headline(a));
    v["rule"] = json!(crate::soak::rule(a));
    for (i, l) in a.leaks.iter().enumerate() {
        v["leaks"][i]["why"] = json!(crate::soak::why(l));
    }
    v
}

/// A verdict's facts with its words: `headline`, `lines`, and the wall's `text` and
/// `short`. A verdict recorded before its wall was a fact has no facts to word: it keeps
/// the words it was recorded with, as they were.
pub fn verdict(v: &Verdict) -> Value {
    let mut out = serde_json::to_value(v).expect("a verdict serializes");
    if v.wall.fact.is_none() {
        return out;
    }
    out["headline"] = json!(headline::of(v));
    out["lines"] = serde_json::to_value(headline::lines_of(v)).expect("lines serialize");
    out["wall"]["text"] = json!(wall::text(&v.wall));
    out["wall"]["short"] = json!(wall::short(&v.wall));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::ladder::{LadderAnalysis, RunAnalysis};
    use result::wall::WallFact;

    fn judged() -> Verdict {
        let mut v = Verdict {
            holds: Some(8),
            top: Some(16),
            ..Verdict::default()
        };
        v.wall.fact = Some(WallFact::OutOfThreads { at: 16 });
        v
    }

    #[test]
    fn a_verdict_is_stored_without_words_and_written_with_them() {
        let v = judged();
        let stored = serde_json::to_value(&v).unwrap();
        for key in ["headline", "lines"] {
            assert!(stored.get(key).is_none(), "{key} stored: {stored}");
        }
        assert!(stored["wall"].get("text").is_none(), "{stored}");
        let written = verdict(&v);
        assert_eq!(
            written["headline"],
            "holds 8 sessions · wall: threads (none left at 16) · no collapse up to 16"
        );
        assert_eq!(written["wall"]["text"], wall::text(&v.wall));
        assert_eq!(written["lines"][0]["label"], "budget");
        // Read back (a result.json given to `report`), it is written the same again: the
        // words come from the facts, whatever words the file held beside them.
        let mut back: Verdict = serde_json::from_value(written.clone()).unwrap();
        back.recorded_headline = "words of another day".into();
        assert_eq!(verdict(&back), written);
    }

    #[test]
    fn a_verdict_recorded_before_facts_is_written_with_its_words_as_they_were() {
        let old = r#"{"headline":"holds 8 sessions · wall: CPU — then","holds":8,"over_from":16,
            "collapse":null,"top":16,"standings":[],"plateau":null,"knee":null,
            "wall":{"kind":"cpu","from":16.0,"text":"CPU — then"}}"#;
        let v: Verdict = serde_json::from_str(old).unwrap();
        let written = verdict(&v);
        assert_eq!(written["headline"], "holds 8 sessions · wall: CPU — then");
        assert_eq!(written["wall"]["text"], "CPU — then");
        assert!(written["wall"].get("short").is_none(), "{written}");
        assert!(written.get("lines").is_none(), "{written}");
    }

    #[test]
    fn a_soak_is_stored_with_its_readings_and_written_with_their_words() {
        use result::soak::{Leak, LeakReading, LeakVerdict};
        let a = SoakAnalysis {
            leaks: vec![Leak {
                resource: "threads".into(),
                verdict: LeakVerdict::NoLeak,
                reading: Some(LeakReading::NoTrend { p: 0.4 }),
                ..Leak::default()
            }],
            ..SoakAnalysis::default()
        };
        let stored = serde_json::to_value(&a).unwrap();
        assert!(stored.get("headline").is_none() && stored["leaks"][0].get("why").is_none());
        let doc = soak(&SoakDoc {
            analysis: a,
            ..SoakDoc::default()
        });
        let w = &doc["analysis"];
        assert!(w["headline"]
            .as_str()
            .unwrap()
            .starts_with("no leak in threads"));
        assert_eq!(w["rule"], crate::soak::stated_rule());
        assert_eq!(w["leaks"][0]["verdict"], "no leak");
        assert_eq!(w["leaks"][0]["reading"]["reading"], "no_trend");
        assert!(w["leaks"][0]["why"]
            .as_str()
            .unwrap()
            .starts_with("no trend"));
    }

    #[test]
    fn a_ladder_and_its_arms_carry_each_verdicts_words_where_it_has_one() {
        let mut doc = LadderDoc::default();
        assert!(ladder(&doc)["analysis"].is_null());
        doc.analysis = Some(RunAnalysis::Ladder(Box::new(LadderAnalysis {
            verdict: Some(judged()),
            ..LadderAnalysis::default()
        })));
        let stored = serde_json::to_value(&doc).unwrap();
        assert!(stored["analysis"]["capacity"].is_null(), "{stored}");
        let v = ladder(&doc);
        assert!(
            v["analysis"]["capacity"].is_null(),
            "no projection, no working: {v}"
        );
        assert!(v["analysis"]["verdict"]["headline"]
            .as_str()
            .unwrap()
            .starts_with("holds 8 sessions"));
        if let Some(RunAnalysis::Ladder(a)) = &mut doc.analysis {
            a.capacity = Some(result::ladder::Capacity {
                per_session: Some(result::ladder::SessionCost::default()),
                ..Default::default()
            });
        }
        let projected = ladder(&doc);
        assert!(serde_json::to_value(&doc).unwrap()["analysis"]["capacity"]["working"].is_null());
        assert!(projected["analysis"]["capacity"]["working"][0]
            .as_str()
            .unwrap()
            .starts_with("memory: "));
        let v = projected;
        let both = arms(&ArmsDoc {
            arms: vec![LadderDoc::default(), doc],
            ..ArmsDoc::default()
        });
        assert!(both["arms"][0]["analysis"].is_null());
        assert_eq!(both["arms"][1], v);
    }

    #[test]
    fn a_sweep_is_stored_with_its_cliffs_and_written_with_their_sentences() {
        use result::environment::Axis;
        use result::sweep::{Cell, Row, Sweep};
        use result::PointStanding;
        let doc = SweepDoc {
            sweep: Sweep {
                axes: vec![Axis {
                    name: "messages".into(),
                    values: vec![50.0, 100.0],
                }],
                cells: vec![Cell {
                    values: vec![100.0],
                    standing: PointStanding::Collapsed,
                    why: Some(Some("closed".into())),
                    ..Cell::default()
                }],
                rows: vec![Row {
                    last_holding: Some(50.0),
                    first_failing: Some(100.0),
                    failed: Some(PointStanding::Collapsed),
                    ..Row::default()
                }],
                ..Sweep::default()
            },
            ..SweepDoc::default()
        };
        let stored = serde_json::to_value(&doc).unwrap();
        assert!(
            stored["sweep"]["rows"][0].get("sentence").is_none(),
            "{stored}"
        );
        assert_eq!(stored["sweep"]["cells"][0]["standing"], "collapsed");
        let written = sweep(&doc);
        assert_eq!(
            written["sweep"]["rows"][0]["sentence"],
            "holds up to messages=50; collapses at messages=100 (closed) — the cliff lies between 50 and 100"
        );
        assert_eq!(written["sweep"]["rows"][0]["failed"], "collapsed");
    }
}
