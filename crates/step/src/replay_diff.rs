//! Where a replayed session left its recording, said so a reader can act on it: the
//! first difference per session — the turn, the call, and what was recorded against what
//! happened (a tool the SUT did not offer, no tools offered at all, a call it did not
//! make, a call the recording does not have, a turn that never reached the mock).

use mock::provider::replay::{Played, SessionPlay};
use workload::Session;

/// The first difference of each session that did not follow its recording, by session
/// name, at most `most` of them.
pub(crate) fn first_differences(
    played: &std::collections::BTreeMap<String, SessionPlay>,
    sessions: &[Session],
    most: usize,
) -> Vec<String> {
    played
        .iter()
        .filter_map(|(name, p)| {
            let rec = sessions.get(p.recorded)?;
            let short = name.rsplit('-').next().unwrap_or(name);
            first_difference(p, rec).map(|d| format!("{short} (recorded {}): {d}", rec.id))
        })
        .take(most)
        .collect()
}

/// The first place where what the mock answered differs from the recorded session.
fn first_difference(p: &SessionPlay, rec: &Session) -> Option<String> {
    let turns = p
        .calls
        .iter()
        .map(|c| c.turn as usize)
        .max()
        .unwrap_or(0)
        .max(rec.turns.len());
    for t in 1..=turns {
        let recorded = rec.turns.get(t - 1).map_or(&[][..], |x| x.calls.as_slice());
        let sent: Vec<&Played> = p.calls.iter().filter(|c| c.turn as usize == t).collect();
        if sent.is_empty() && !recorded.is_empty() {
            return Some(format!(
                "turn {t}: no call reached the mock (the recording has {} there)",
                result::words::count(recorded.len() as u64, "call")
            ));
        }
        for j in 0..recorded.len().max(sent.len()) {
            let at = format!("turn {t}, call {}", j + 1);
            match (recorded.get(j), sent.get(j)) {
                (Some(_), None) => {
                    return Some(format!(
                        "turn {t}: the SUT made {} of the {} recorded — not call {}",
                        sent.len(),
                        recorded.len(),
                        j + 1
                    ))
                }
                (None, Some(_)) => {
                    return Some(format!(
                        "{at}: a call the recording does not have (the SUT called again after the recorded {})",
                        result::words::count(recorded.len() as u64, "call")
                    ))
                }
                (Some(r), Some(s)) => {
                    if let Some(d) = call_difference(r, s) {
                        return Some(format!("{at}: {d}"));
                    }
                }
                (None, None) => {}
            }
        }
    }
    None
}

/// One call recorded against the call answered: the tools asked for.
fn call_difference(r: &workload::Call, s: &Played) -> Option<String> {
    let names = |v: Vec<&str>| match v.as_slice() {
        [] => "no tool".to_string(),
        v => v
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let recorded: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
    if s.no_tools {
        return Some(format!(
            "the recording asked for {} here, but the SUT offered no tools (the mock answered in text)",
            names(recorded)
        ));
    }
    if !s.unoffered.is_empty() {
        return Some(format!(
            "recorded {}, a tool the SUT did not offer (the mock called {} in its place)",
            names(s.unoffered.iter().map(String::as_str).collect()),
            names(s.tools.iter().map(String::as_str).collect())
        ));
    }
    let asked: Vec<&str> = s.tools.iter().map(String::as_str).collect();
    (asked != recorded).then(|| format!("recorded {}, asked for {}", names(recorded), names(asked)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::{Call, ToolUse, Turn};

    fn call(tools: &[&str]) -> Call {
        Call {
            model: "m".into(),
            input_tokens: None,
            output_tokens: Some(10),
            tools: tools
                .iter()
                .map(|n| ToolUse {
                    name: n.to_string(),
                    ms: 1.0,
                })
                .collect(),
            agent: None,
        }
    }

    fn played(turn: u32, tools: &[&str], unoffered: &[&str], no_tools: bool) -> Played {
        Played {
            turn,
            tools: tools.iter().map(|s| s.to_string()).collect(),
            output_tokens: 10,
            recorded: true,
            unoffered: unoffered.iter().map(|s| s.to_string()).collect(),
            no_tools,
        }
    }

    fn session(turns: Vec<Vec<Call>>) -> Session {
        Session {
            id: "trace:ab12".into(),
            start_ms: 0.0,
            turns: turns
                .into_iter()
                .map(|calls| Turn {
                    think_ms: 0.0,
                    duration_ms: 100.0,
                    user_tokens: 5,
                    user_text: None,
                    calls,
                    unasked_tools: Vec::new(),
                })
                .collect(),
        }
    }

    /// A recorded workload replayed against an agent that offers other tools (issue 40):
    /// each session's first difference named, not only "0 of 3 as recorded".
    #[test]
    fn the_first_difference_names_the_turn_the_call_and_the_tool() {
        let rec = session(vec![vec![call(&["lookup"]), call(&[])], vec![call(&[])]]);
        let other_tools = SessionPlay {
            recorded: 0,
            calls: vec![
                played(1, &["search"], &["lookup"], false),
                played(1, &[], &[], false),
                played(2, &[], &[], false),
            ],
        };
        assert_eq!(
            first_difference(&other_tools, &rec).unwrap(),
            "turn 1, call 1: recorded `lookup`, a tool the SUT did not offer (the mock called `search` in its place)"
        );
        let none = SessionPlay {
            recorded: 0,
            calls: vec![played(1, &[], &["lookup"], true)],
        };
        assert_eq!(
            first_difference(&none, &rec).unwrap(),
            "turn 1, call 1: the recording asked for `lookup` here, but the SUT offered no tools (the mock answered in text)"
        );
        let fewer = SessionPlay {
            recorded: 0,
            calls: vec![
                played(1, &["lookup"], &[], false),
                played(1, &[], &[], false),
            ],
        };
        assert_eq!(
            first_difference(&fewer, &rec).unwrap(),
            "turn 2: no call reached the mock (the recording has 1 call there)"
        );
        let more = SessionPlay {
            recorded: 0,
            calls: vec![
                played(1, &["lookup"], &[], false),
                played(1, &[], &[], false),
                played(1, &[], &[], false),
                played(2, &[], &[], false),
            ],
        };
        assert_eq!(
            first_difference(&more, &rec).unwrap(),
            "turn 1, call 3: a call the recording does not have (the SUT called again after the recorded 2 calls)"
        );
        let same = SessionPlay {
            recorded: 0,
            calls: vec![
                played(1, &["lookup"], &[], false),
                played(1, &[], &[], false),
                played(2, &[], &[], false),
            ],
        };
        assert_eq!(first_difference(&same, &rec), None);
        let named = first_differences(
            &[("3f9a1c-s1".to_string(), other_tools)]
                .into_iter()
                .collect(),
            &[rec],
            5,
        );
        assert_eq!(named, ["s1 (recorded trace:ab12): turn 1, call 1: recorded `lookup`, a tool the SUT did not offer (the mock called `search` in its place)"]);
    }
}
