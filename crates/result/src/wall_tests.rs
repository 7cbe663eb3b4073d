use super::*;
use crate::kinds::WallKind;
use crate::ladder::Wall;

#[test]
fn a_wall_recorded_before_facts_reads_with_its_words_and_no_fact() {
    let old = r#"{"kind":"cpu","from":8.0,"text":"CPU — as said then","short":"CPU (then)"}"#;
    let w: Wall = serde_json::from_str(old).unwrap();
    assert_eq!((w.kind, w.from), (WallKind::Cpu, Some(8.0)));
    assert_eq!((w.fact, w.also.len()), (None, 0));
    assert_eq!(
        (w.recorded_text.as_str(), w.recorded_short.as_str()),
        ("CPU — as said then", "CPU (then)")
    );
}

#[test]
fn a_wall_keeps_its_fact_and_what_it_adds_through_json() {
    let w = Wall {
        kind: WallKind::Pool,
        from: Some(4.0),
        fact: Some(WallFact::Pool(PoolHeld {
            unit: Unit::Session,
            peer: "redis".into(),
            count: 4,
            from: 4,
            to: 32,
            course: PoolCourse::Flat(Flat {
                from: 4.0,
                turns_per_s: 9.6,
                peak: None,
            }),
            cpu: Some(0.52),
            workers: None,
            provider: Some(4),
        })),
        also: vec![WallAlso::ProbeWaited { ms: 120.0 }],
        ..Wall::default()
    };
    let json = serde_json::to_value(&w).unwrap();
    assert!(
        json.get("text").is_none() && json.get("short").is_none(),
        "{json}"
    );
    assert_eq!(json["fact"]["reading"], "pool");
    assert_eq!(json["fact"]["course"]["course"], "flat");
    assert_eq!(json["also"][0]["also"], "probe_waited");
    let back: Wall = serde_json::from_value(json).unwrap();
    assert_eq!(back, w);
}
