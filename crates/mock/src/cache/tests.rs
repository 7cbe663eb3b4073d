//! Known answers for the cache: hits and misses, minimum lengths, lifetimes, eviction,
//! breakpoints — each figure worked out by hand from the token rule (a word with its
//! leading space is one token; a message adds four).

use super::*;
use serde_json::{json, Value};
use wire::Api;

const SCOPE: u64 = 42;

/// "w w w …": `n` tokens (the first word and n − 1 words with their space).
fn words(n: usize) -> String {
    vec!["w"; n].join(" ")
}

fn parse(api: Api, body: Value) -> wire::Request {
    api.parse(body.to_string().as_bytes()).unwrap()
}

/// Serves `req` as the mock does, its scope the key it names.
fn run(store: &Store, api: Api, req: &wire::Request, now_ms: u64) -> Served {
    let rules = api.dialect().cache_rules(&req.model);
    let spots: Vec<wire::Spot> = req.cache.all_breakpoints().iter().map(|b| b.at).collect();
    let p = prefix::build(req, rules.steps, &spots);
    let scope = fnv1a(SCOPE, req.cache.key.as_deref().unwrap_or("").as_bytes());
    serve(store, &rules, &p, &req.cache, (scope, rules.ttl_ms, now_ms))
}

fn chat(system: usize, user: &str, key: Option<&str>) -> wire::Request {
    chat_of(&words(system), user, key)
}

fn chat_of(system: &str, user: &str, key: Option<&str>) -> wire::Request {
    let mut body = json!({"model": "gpt-4o", "messages": [
        {"role": "system", "content": system}, {"role": "user", "content": user}]});
    if let Some(k) = key {
        body["prompt_cache_key"] = k.into();
    }
    parse(Api::ChatCompletions, body)
}

#[test]
fn openai_hits_the_longest_cached_step_from_1024_tokens() {
    let s = Store::new(1000);
    // 1500 system tokens + a 4-token message frame + "hi" = 1505 tokens.
    let r = chat(1500, "hi", None);
    assert_eq!(r.prompt_tokens, 1505);
    assert_eq!(
        run(&s, Api::ChatCompletions, &r, 0).usage.read,
        0,
        "a cold cache"
    );
    let again = run(&s, Api::ChatCompletions, &r, 10);
    // 1024 + 3 × 128 = 1408 ≤ 1505 < 1536.
    assert_eq!((again.usage.read, again.held), (1408, 1408));
    // Another question after the same system prompt reads the steps inside the system.
    let other = run(
        &s,
        Api::ChatCompletions,
        &chat(1500, "other words", None),
        20,
    );
    assert_eq!(other.usage.read, 1408);
    // Under another prompt_cache_key nothing is shared.
    let keyed = run(&s, Api::ChatCompletions, &chat(1500, "hi", Some("k")), 30);
    assert_eq!(keyed.usage.read, 0);
    // Below 1024 tokens nothing is cached.
    let short = chat(1000, "hi", None);
    run(&s, Api::ChatCompletions, &short, 40);
    assert_eq!(
        run(&s, Api::ChatCompletions, &short, 50).usage,
        wire::CacheUsage::default()
    );
}

#[test]
fn an_unused_prefix_expires_after_its_lifetime() {
    let s = Store::new(1000);
    let r = chat(1500, "hi", None);
    run(&s, Api::ChatCompletions, &r, 0);
    assert_eq!(
        run(&s, Api::ChatCompletions, &r, 299_999).usage.read,
        1408,
        "used: renewed"
    );
    let late = 299_999 + 300_000;
    assert_eq!(
        run(&s, Api::ChatCompletions, &r, late).usage.read,
        0,
        "5 minutes unused"
    );
}

#[test]
fn a_full_cache_evicts_the_least_recently_used_prefix() {
    let s = Store::new(1);
    let (a, b) = (
        chat_of(&vec!["a"; 1100].join(" "), "q", None),
        chat_of(&vec!["b"; 1100].join(" "), "q", None),
    );
    // One step each (1024): a's entry, then b's over it.
    run(&s, Api::ChatCompletions, &a, 0);
    run(&s, Api::ChatCompletions, &b, 1);
    assert_eq!(
        run(&s, Api::ChatCompletions, &a, 2).usage.read,
        0,
        "b evicted a"
    );
    assert!(s.evicted.load(std::sync::atomic::Ordering::Relaxed) >= 1);
}

fn claude(system: usize, cc_system: Value, messages: Value) -> wire::Request {
    let mut sys = json!({"type": "text", "text": words(system)});
    if !cc_system.is_null() {
        sys["cache_control"] = cc_system;
    }
    parse(
        Api::Messages,
        json!({"model": "claude-sonnet-4-5", "max_tokens": 100, "system": [sys], "messages": messages}),
    )
}

fn user(text: &str, cc: bool) -> Value {
    let mut b = json!({"type": "text", "text": text});
    if cc {
        b["cache_control"] = json!({"type": "ephemeral"});
    }
    json!({"role": "user", "content": [b]})
}

#[test]
fn anthropic_writes_at_breakpoints_and_reads_them_back() {
    let s = Store::new(1000);
    let cc = json!({"type": "ephemeral"});
    let r = claude(2000, cc.clone(), json!([user("hi there", false)]));
    // Written: the system prompt (2000 tokens); after the breakpoint: 4 + 2 = 6 tokens.
    let first = run(&s, Api::Messages, &r, 0);
    assert_eq!(
        first.usage,
        wire::CacheUsage {
            read: 0,
            write_5m: 2000,
            write_1h: 0
        }
    );
    assert_eq!(
        r.prompt_tokens - first.usage.read - first.usage.written(),
        6
    );
    let second = run(&s, Api::Messages, &r, 1);
    assert_eq!(
        second.usage,
        wire::CacheUsage {
            read: 2000,
            ..Default::default()
        }
    );
    // Without a breakpoint nothing is read or written, whatever is cached.
    let bare = claude(2000, Value::Null, json!([user("hi there", false)]));
    assert_eq!(
        run(&s, Api::Messages, &bare, 2).usage,
        wire::CacheUsage::default()
    );
}

#[test]
fn anthropic_looks_back_twenty_blocks_from_a_breakpoint() {
    let s = Store::new(1000);
    let turn = |n: usize| -> Vec<Value> {
        (0..n)
            .flat_map(|i| {
                [
                    user(&format!("question {i}"), false),
                    json!({"role": "assistant", "content": format!("answer {i}")}),
                ]
            })
            .collect()
    };
    let mut msgs = turn(1);
    msgs.push(user("now", true));
    let r = claude(1100, Value::Null, Value::from(msgs.clone()));
    let w = run(&s, Api::Messages, &r, 0);
    assert_eq!((w.usage.read, w.usage.write_5m), (0, r.prompt_tokens));
    // The next call marks its own last message: the earlier breakpoint is found 2
    // blocks back and read; the new tail is written.
    msgs.push(json!({"role": "assistant", "content": "ok"}));
    msgs.push(user("more", true));
    let r2 = claude(1100, Value::Null, Value::from(msgs.clone()));
    let n = run(&s, Api::Messages, &r2, 1);
    assert_eq!(n.usage.read, r.prompt_tokens);
    assert_eq!(n.usage.write_5m, r2.prompt_tokens - r.prompt_tokens);
    // With only the last message marked, 22 blocks later, the earlier entries are out
    // of reach: nothing read.
    let mut far = turn(1);
    far.extend([
        user("now", false),
        json!({"role": "assistant", "content": "ok"}),
        user("more", false),
    ]);
    far.extend(turn(11));
    far.push(user("end", true));
    let r3 = claude(1100, Value::Null, Value::from(far));
    assert_eq!(run(&s, Api::Messages, &r3, 2).usage.read, 0);
}

#[test]
fn anthropic_minimum_and_lifetimes_per_breakpoint() {
    let s = Store::new(1000);
    // Sonnet caches from 1024 tokens: a 1000-token breakpoint writes nothing.
    let small = claude(
        1000,
        json!({"type": "ephemeral"}),
        json!([user("hi", false)]),
    );
    assert_eq!(run(&s, Api::Messages, &small, 0).usage.written(), 0);
    // A 1 h breakpoint on the system prompt and a 5 m one on the message: the system's
    // tokens are written for an hour, the message's for five minutes.
    let r = claude(
        1500,
        json!({"type": "ephemeral", "ttl": "1h"}),
        json!([user("hello you", true)]),
    );
    let u = run(&s, Api::Messages, &r, 0).usage;
    assert_eq!((u.write_1h, u.write_5m), (1500, 4 + 2));
    // Six minutes on, the 5 m entry is gone and the 1 h one is read.
    let later = run(&s, Api::Messages, &r, 360_000).usage;
    assert_eq!((later.read, later.write_5m), (1500, 6));
}

#[test]
fn gemini_caches_any_prefix_ending_at_a_part_from_its_minimum() {
    let s = Store::new(1000);
    let req = |q: &str| {
        let body = json!({"systemInstruction": {"parts": [{"text": words(2100)}]},
            "contents": [{"role": "user", "parts": [{"text": q}]}]});
        let mut r = parse(Api::Gemini, body);
        r.model = "gemini-2.5-flash".into();
        r
    };
    run(&s, Api::Gemini, &req("a"), 0);
    // The system instruction (2100 ≥ 2048) is the longest shared prefix.
    assert_eq!(run(&s, Api::Gemini, &req("b"), 1).usage.read, 2100);
}
