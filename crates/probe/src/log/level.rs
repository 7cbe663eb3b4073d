//! A log line's level, when it says warning or error: Python logging (`WARNING:name:…`,
//! `%(levelname)s …`), Go log/slog (`level=WARN`, JSON), Rust tracing (`… WARN target:
//! …`), or any JSON line with a `level`/`severity`/`levelname` field. Counting the lines
//! is `book`'s business.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Warning,
    Error,
}

impl Level {
    pub fn word(self) -> &'static str {
        match self {
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// A JSON log line's object, read once per line: its level, its message and its fields
/// are all read from it. None for a text line (or one that is not a JSON object).
pub type Json = serde_json::Map<String, serde_json::Value>;

pub fn json_of(line: &str) -> Option<Json> {
    let t = line.trim_start();
    if !t.starts_with('{') {
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(t) {
        Ok(serde_json::Value::Object(o)) => Some(o),
        _ => None,
    }
}

/// The level of a log line, when it says warning or error.
pub fn level_of(line: &str) -> Option<Level> {
    level_in(line, json_of(line).as_ref())
}

/// The level of a log line already read as JSON (`json`, from [`json_of`]) or not.
pub fn level_in(line: &str, json: Option<&Json>) -> Option<Level> {
    if let Some(o) = json {
        let word = ["level", "severity", "levelname", "lvl"]
            .iter()
            .find_map(|k| o.get(*k).and_then(|v| v.as_str()))?;
        return level_word(word);
    }
    let t = line.trim_start();
    // `level=WARN` (slog text, logfmt)
    if let Some(i) = t.find("level=") {
        let w: String = t[i + 6..]
            .trim_start_matches('"')
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        return level_word(&w);
    }
    // A level word among the first few tokens: `WARNING:root:…`, `ERROR name: …`,
    // `2026-11-23T… WARN target: …`, `[2026-…] [ERROR] …`, `W1123 …` is not read.
    t.split(|c: char| c.is_whitespace() || matches!(c, ':' | '[' | ']' | '|' | '('))
        .filter(|w| w.chars().any(|c| c.is_alphanumeric()))
        .take(6)
        .find_map(|w| {
            w.chars()
                .all(|c| c.is_ascii_uppercase())
                .then(|| level_word(w))
                .flatten()
        })
}

/// A JSON line's own message (its `message`, `msg` or `event` field): what makes two of
/// its lines one kind, whatever ids and timings ride beside it.
pub fn message_in(json: &Json) -> Option<&str> {
    ["message", "msg", "event"]
        .iter()
        .find_map(|k| json.get(*k)?.as_str())
}

fn level_word(w: &str) -> Option<Level> {
    match w.to_ascii_lowercase().as_str() {
        "warn" | "warning" => Some(Level::Warning),
        "error" | "err" | "critical" | "crit" | "fatal" | "panic" | "alert" | "emerg" => {
            Some(Level::Error)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_of_common_formats() {
        let w = Some(Level::Warning);
        let e = Some(Level::Error);
        assert_eq!(level_of("WARNING:root:disk almost full"), w);
        assert_eq!(level_of("WARNING threads: heartbeat failed"), w);
        assert_eq!(
            level_of("ERROR:uvicorn.error:Exception in ASGI application"),
            e
        );
        assert_eq!(level_of("2026-11-23 14:00:01,123 - app - ERROR - boom"), e);
        assert_eq!(
            level_of("time=2026-11-23T14:00:01Z level=WARN msg=\"slow\""),
            w
        );
        assert_eq!(
            level_of("{\"time\":\"…\",\"level\":\"error\",\"msg\":\"x\"}"),
            e
        );
        assert_eq!(level_of("{\"severity\":\"WARNING\",\"message\":\"x\"}"), w);
        assert_eq!(
            level_of("2026-11-23T14:00:01.5Z  WARN hyper::proto: slow client"),
            w
        );
        assert_eq!(level_of("[2026-11-23 14:00:01] [CRITICAL] out of slots"), e);
        assert_eq!(
            level_of("INFO:     127.0.0.1:5000 - \"POST /chat HTTP/1.1\" 200 OK"),
            None
        );
        assert_eq!(
            level_of("the error rate is fine"),
            None,
            "a lowercase word in prose"
        );
        assert_eq!(
            level_of("{\"level\":\"info\",\"msg\":\"error handling on\"}"),
            None
        );
    }
}
