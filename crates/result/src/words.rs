//! Counts with their nouns in agreement: `1 connection`, `2 connections`, `1 process`,
//! `2 processes` — for every line that puts a number before a noun, and large whole
//! numbers grouped by thousands (`10,002`). What the lines say is each renderer's
//! business.

/// `n noun`, the noun plural unless n is 1.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {}", noun_for(n, noun))
}

/// `n noun` with n grouped by thousands: `1 thread`, `10,002 threads`.
pub fn many(n: u64, noun: &str) -> String {
    format!("{} {}", int(n), noun_for(n, noun))
}

/// A level of sessions, the noun agreeing: `1 session`, `16 sessions`, `2.5 sessions`.
pub fn sessions(n: f64) -> String {
    count_f(n, "session")
}

/// A measured amount with its noun: `1 call`, `2.5 calls` (three significant digits).
pub fn count_f(x: f64, noun: &str) -> String {
    match x == 1.0 {
        true => format!("1 {noun}"),
        false => format!("{} {}", crate::budget::num(x), plural(noun)),
    }
}

/// A whole number grouped by thousands, as people write it: `192,731`.
pub fn int(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The noun as it goes after `n`.
pub fn noun_for(n: u64, noun: &str) -> String {
    if n == 1 {
        return noun.to_string();
    }
    plural(noun)
}

/// The English plural of the nouns Plimsoll counts.
pub fn plural(noun: &str) -> String {
    let consonant_y = noun.ends_with('y')
        && !noun.ends_with("ay")
        && !noun.ends_with("ey")
        && !noun.ends_with("oy");
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// A line about sessions said of voice calls: each `session` or `sessions` a count or
/// a share of the load becomes `call` or `calls` (`holds 3 sessions`, `per session`,
/// `a session's memory`); the session file, a session id and the session marker stay.
pub fn as_calls(text: &str) -> String {
    const KEEP: &[&str] = &[" file", ".toml", " id", " marker", " field", " value"];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("session") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let plural = from[7..].starts_with('s');
        let word_len = if plural { 8 } else { 7 };
        let after = &from[word_len..];
        let starts_word = !out.ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let ends_word = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-');
        let kept = KEEP.iter().any(|k| after.starts_with(k));
        match starts_word && ends_word && !kept {
            true => out.push_str(if plural { "calls" } else { "call" }),
            false => out.push_str(&from[..word_len]),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_about_sessions_are_said_of_calls() {
        assert_eq!(
            as_calls("holds 3 sessions · wall: one thread at 4 sessions; 3 MB a session"),
            "holds 3 calls · wall: one thread at 4 calls; 3 MB a call"
        );
        assert_eq!(
            as_calls(
                "each session's first turn; the session file session.toml; session_id; sessions_ok"
            ),
            "each call's first turn; the session file session.toml; session_id; sessions_ok"
        );
        assert_eq!(
            as_calls("per-session RSS, 1 session"),
            "per-call RSS, 1 call"
        );
    }

    #[test]
    fn nouns_agree_with_one_and_two() {
        assert_eq!(count(1u64, "connection"), "1 connection");
        assert_eq!(count(2u64, "connection"), "2 connections");
        assert_eq!(count(2u64, "process"), "2 processes");
        assert_eq!(count(2u64, "replica"), "2 replicas");
        assert_eq!(count(2u64, "dependency"), "2 dependencies");
        assert_eq!(count(0u64, "time"), "0 times");
        assert_eq!(many(1, "thread"), "1 thread");
        assert_eq!(
            (sessions(1.0), sessions(2.0)),
            ("1 session".into(), "2 sessions".into())
        );
        assert_eq!(many(10_002, "thread"), "10,002 threads");
        assert_eq!(
            (int(0), int(999), int(1_000)),
            ("0".into(), "999".into(), "1,000".into())
        );
        assert_eq!(int(192_731_004), "192,731,004");
    }
}
