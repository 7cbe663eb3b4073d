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

/// What a ladder counts: sessions of text turns, or voice calls. Decided once for a run
/// ([`Unit::of`], or from the session file before it runs), carried in the verdict, and
/// worded here wherever a sentence puts a level before its noun.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    #[default]
    Session,
    Call,
}

impl Unit {
    /// The unit of a run: calls when any step carried a voice call's figures.
    pub fn of(steps: &[crate::StepResult]) -> Unit {
        match steps.iter().any(|s| s.voice.is_some()) {
            true => Unit::Call,
            false => Unit::Session,
        }
    }

    /// The unit of one step's run.
    pub fn of_step(step: &crate::StepResult) -> Unit {
        Unit::of(std::slice::from_ref(step))
    }

    /// Calls when `calls`, else sessions: what a session file with a voice section runs.
    pub fn calls_when(calls: bool) -> Unit {
        match calls {
            true => Unit::Call,
            false => Unit::Session,
        }
    }

    pub fn is_calls(self) -> bool {
        self == Unit::Call
    }

    pub fn is_sessions(&self) -> bool {
        *self == Unit::Session
    }

    /// The noun for one: `session`, `call`.
    pub fn one(self) -> &'static str {
        match self {
            Unit::Session => "session",
            Unit::Call => "call",
        }
    }

    /// The noun for many: `sessions`, `calls`.
    pub fn many(self) -> &'static str {
        match self {
            Unit::Session => "sessions",
            Unit::Call => "calls",
        }
    }

    /// A level with its noun agreeing: `1 call`, `16 sessions`, `2.5 calls`.
    pub fn count(self, n: f64) -> String {
        count_f(n, self.one())
    }

    /// A whole level with its noun: `1 session`, `8 calls`.
    pub fn level(self, n: usize) -> String {
        self.count(n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_is_said_in_its_unit() {
        assert_eq!(Unit::Call.level(1), "1 call");
        assert_eq!(Unit::Call.level(16), "16 calls");
        assert_eq!(Unit::Session.count(2.5), "2.5 sessions");
        assert_eq!(
            (Unit::Call.one(), Unit::Session.many()),
            ("call", "sessions")
        );
        let voice = crate::StepResult {
            voice: Some(Default::default()),
            ..Default::default()
        };
        assert_eq!(Unit::of(&[crate::StepResult::default(), voice]), Unit::Call);
        assert_eq!(Unit::of(&[crate::StepResult::default()]), Unit::Session);
        assert_eq!(Unit::default(), Unit::Session);
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
