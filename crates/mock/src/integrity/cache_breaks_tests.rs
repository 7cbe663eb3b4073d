//! Known answers for the oracle's cache breaks: a conversation that only grows breaks
//! nothing; a changing timestamp, shuffled tools, rewritten history and another model
//! each break it with their kind, place and excerpt; a sub-agent is a thread of its own.

use super::*;
use crate::cache::prefix;
use serde_json::{json, Value};
use wire::{Api, CacheUsage, Steps};

const RULES: CacheRules = CacheRules::OPENAI;

fn tools(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}))
        .collect()
}

/// A chat prompt: a long system prompt, tools, and `turns` user/assistant exchanges.
fn prompt(system: &str, tool_names: &[&str], turns: &[&str]) -> (Prefix, String) {
    let mut messages = vec![json!({"role": "system", "content": system})];
    for (i, t) in turns.iter().enumerate() {
        if i > 0 {
            messages.push(json!({"role": "assistant", "content": format!("answer {i}")}));
        }
        messages.push(json!({"role": "user", "content": t}));
    }
    let body = json!({"model": "gpt-4o", "messages": messages, "tools": tools(tool_names)});
    let r = Api::ChatCompletions
        .parse(body.to_string().as_bytes())
        .unwrap();
    let steps = Steps::Tokens {
        first: 1024,
        every: 128,
    };
    (prefix::build(&r, steps, &[]), r.model)
}

/// Sends `p` through the oracle, the cache having read `read` and holding all it may.
fn send(threads: &mut Threads, p: &Prefix, model: &str, read: u32) -> Seen {
    let asked = Asked {
        rules: &RULES,
        model,
        key: None,
        served: Served {
            usage: CacheUsage {
                read,
                ..Default::default()
            },
            held: RULES.cacheable(p.total),
        },
        session: "s1",
        turn: 2,
    };
    observe(threads, p, &asked, 4)
}

fn system(at: &str) -> String {
    format!(
        "You are a helpful agent. The time is {at}. {}",
        "Follow the rules. ".repeat(400)
    )
}

#[test]
fn a_conversation_that_only_grows_breaks_nothing() {
    let mut t = Threads::default();
    let (a, m) = prompt(&system("noon"), &["f", "g"], &["first question"]);
    assert_eq!(
        send(&mut t, &a, &m, 0),
        Seen {
            could: 0,
            broke: None
        }
    );
    let (b, _) = prompt(&system("noon"), &["f", "g"], &["first question", "second"]);
    let seen = send(&mut t, &b, &m, 1280);
    assert_eq!(seen.broke, None);
    // It could read all the earlier prompt held: its length in steps of 128.
    assert_eq!(seen.could, RULES.cacheable(a.total));
}

#[test]
fn a_timestamp_in_the_system_prompt_breaks_it_there() {
    let mut t = Threads::default();
    let (a, m) = prompt(&system("2026-11-24T18:41:07Z"), &["f"], &["q1"]);
    send(&mut t, &a, &m, 0);
    let (b, _) = prompt(&system("2026-11-24T18:41:09Z"), &["f"], &["q1", "q2"]);
    let seen = send(&mut t, &b, &m, 0);
    let k = seen.broke.expect("a break");
    assert_eq!(
        (k.kind.as_str(), k.part.as_str()),
        ("system_changed", "system message")
    );
    // "You are a helpful agent. The time is 2026-11-24T18:41:0" is 55 characters.
    assert_eq!(k.char, 55);
    assert_eq!(
        k.before,
        "…me is 2026-11-24T18:41:07Z. Follow the rules. Fo…"
    );
    assert_eq!(
        k.after,
        "…me is 2026-11-24T18:41:09Z. Follow the rules. Fo…"
    );
    assert_eq!((k.session.as_str(), k.turn), ("s1", 2));
    assert!(k.lost_tokens > 1000, "{k:?}");
    assert_eq!(
        seen.could,
        RULES.cacheable(a.total),
        "what it could have read"
    );
}

#[test]
fn shuffled_tools_and_rewritten_history_are_their_own_kinds() {
    let mut t = Threads::default();
    let s = system("noon");
    let (a, m) = prompt(&s, &["f", "g"], &["q1", "q2"]);
    send(&mut t, &a, &m, 0);
    let (b, _) = prompt(&s, &["g", "f"], &["q1", "q2", "q3"]);
    let k = send(&mut t, &b, &m, 0).broke.expect("a break");
    assert_eq!(
        (k.kind.as_str(), k.part.as_str()),
        ("tools_reordered", "tools (tool 1, `g`)")
    );
    let (c, _) = prompt(&s, &["g", "f", "h"], &["q1", "q2", "q3"]);
    send(&mut t, &c, &m, 0);
    // The first question summarised in place; the second kept.
    let (d, _) = prompt(&s, &["g", "f", "h"], &["(summary)", "q2", "q3", "q4"]);
    let k = send(&mut t, &d, &m, 0).broke.expect("a break");
    assert_eq!(
        (k.kind.as_str(), k.part.as_str()),
        ("messages_changed", "message 1 (user)")
    );
    assert_eq!((k.before.as_str(), k.after.as_str()), ("q1", "(summary)"));
}

#[test]
fn a_sub_agent_is_a_thread_of_its_own_and_a_new_model_breaks() {
    let mut t = Threads::default();
    let (a, m) = prompt(&system("noon"), &["f"], &["main task"]);
    send(&mut t, &a, &m, 0);
    let (sub, _) = prompt(&"You summarise. ".repeat(500), &[], &["summarise this"]);
    assert_eq!(
        send(&mut t, &sub, &m, 0).broke,
        None,
        "another conversation"
    );
    let (b, _) = prompt(&system("noon"), &["f"], &["main task", "next"]);
    assert_eq!(
        send(&mut t, &b, &m, 1280).broke,
        None,
        "the main thread goes on"
    );
    let k = send(&mut t, &b, "gpt-4o-mini", 0).broke.expect("a break");
    assert_eq!(
        (k.kind.as_str(), k.before.as_str(), k.after.as_str()),
        ("model_changed", "gpt-4o", "gpt-4o-mini")
    );
}

#[test]
fn nothing_held_nothing_broken_but_what_could_have_been_read_is_said() {
    let mut t = Threads::default();
    let (a, _) = prompt(&system("1"), &[], &["q"]);
    let asked = || Asked {
        rules: &RULES,
        model: "gpt-4o",
        key: None,
        served: Served::default(),
        session: "s",
        turn: 1,
    };
    observe(&mut t, &a, &asked(), 4);
    let (b, _) = prompt(&system("2"), &[], &["q", "r"]);
    let seen = observe(&mut t, &b, &asked(), 4);
    assert_eq!(seen.broke, None, "the earlier prompt had nothing cached");
    assert_eq!(seen.could, RULES.cacheable(a.total));
}
