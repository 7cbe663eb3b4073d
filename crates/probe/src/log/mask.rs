//! What varies in a log line, masked so that lines of one kind read the same:
//! timestamps and numbers as `#`, long hex and ids as `…`; and terminal colours removed.
//! Grouping lines into kinds is `book`'s business.

/// Runs of 8 or more hex digits and dashes holding at least two digits: ids, hashes,
/// UUIDs, wherever they sit in a word (`call_id=8659e0dc-3ab0-…`).
fn hex_ids() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r"[0-9A-Fa-f][0-9A-Fa-f-]{6,}[0-9A-Fa-f]").expect("a valid pattern")
    })
}

/// The message with what varies masked: timestamps and numbers as `#`, long hex and
/// ids as `…`; at most 160 characters.
pub fn mask(line: &str) -> String {
    let line = hex_ids().replace_all(line, |c: &regex::Captures| {
        let m = &c[0];
        if m.chars().filter(|c| c.is_ascii_digit()).count() >= 2 {
            "…".to_string()
        } else {
            m.to_string()
        }
    });
    let mut out = String::with_capacity(line.len());
    for word in line.split_inclusive(char::is_whitespace) {
        let (w, ws) = word.split_at(word.trim_end().len());
        let hexish = w.len() >= 8
            && w.chars().filter(|c| c.is_ascii_digit()).count() >= 2
            && w.chars()
                .all(|c| c.is_ascii_hexdigit() || "-_:./".contains(c));
        if hexish {
            out.push('…');
        } else {
            let mut prev_digit = false;
            for c in w.chars() {
                if c.is_ascii_digit() {
                    if !prev_digit {
                        out.push('#');
                    }
                    prev_digit = true;
                } else {
                    out.push(c);
                    prev_digit = false;
                }
            }
        }
        out.push_str(ws);
    }
    out.trim().chars().take(160).collect()
}

/// The line without its terminal colour codes (ANSI CSI sequences).
pub(super) fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ … final byte in @–~
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) && d != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
