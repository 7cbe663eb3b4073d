//! Token counts where a recording has text but no count, and filler text of a given count
//! where it has a count but no text. The rule is the mock's (`wire::tokens`): a word with
//! the white space before it is a token (a word over 8 bytes one per 8 bytes), any other
//! character a token of its own — so filler of N tokens is counted as N by the mock.

const WORDS: &[&str] = &[
    "the", "user", "asks", "about", "an", "order", "that", "was", "late", "and", "wants", "to",
    "know", "when", "it", "will", "arrive", "please", "check", "status", "of", "my", "account",
    "with", "notes", "from", "last", "week", "also", "add", "this", "item",
];

/// Tokens in `text` under the mock's rule.
pub fn count(text: &str) -> u32 {
    let b = text.as_bytes();
    let (mut i, mut n) = (0, 0u32);
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            n += 1;
            break;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] >= 0x80) && i - start < 8 {
            i += 1;
        }
        if i == start {
            i += 1;
            while i < b.len() && (b[i] & 0xC0) == 0x80 {
                i += 1;
            }
        }
        n += 1;
    }
    n
}

/// `n` tokens of plain words, the same for the same `key` (a session and turn).
pub fn filler(n: u32, key: u64) -> String {
    let mut s = String::with_capacity(n as usize * 6);
    let mut x = key ^ 0x9E37_79B9_7F4A_7C15;
    for i in 0..n {
        // xorshift: deterministic and cheap; the words only need to look like prose.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if i > 0 {
            s.push(' ');
        }
        s.push_str(WORDS[(x % WORDS.len() as u64) as usize]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filler_counts_as_asked_and_is_deterministic() {
        for n in [0, 1, 7, 300] {
            assert_eq!(count(&filler(n, 3)), n);
        }
        assert_eq!(filler(20, 9), filler(20, 9));
        assert_ne!(filler(20, 9), filler(20, 10));
        assert_eq!(count("Hello, world!"), 4);
        assert_eq!(count("internationalisation"), 3);
    }
}
