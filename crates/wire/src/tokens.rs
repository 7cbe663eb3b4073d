//! The token approximation used for `usage` and for cutting streams into chunks.
//!
//! Real tokenizers are model-specific and large; the mock only needs counts that
//! grow like real ones. The rule: a token is a word (letters and digits) with the
//! white space before it, a word longer than 8 bytes counts once per 8 bytes, and
//! every other character (punctuation, a quote, a brace) is a token of its own.
//! English prose comes out near 1.3 tokens per word, close to BPE tokenizers.

const MAX_TOKEN_BYTES: usize = 8;

/// What a byte is to the rule: white space, part of a word, or anything else.
const SPACE: u8 = 0;
const WORD: u8 = 1;
const OTHER: u8 = 2;

/// Each byte's class, looked up once a byte instead of tested.
static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_whitespace() {
            SPACE
        } else if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 && c & 0xC0 == 0x80 {
            WORD
        } else {
            OTHER
        };
        b += 1;
    }
    t
};

/// Calls `f` with the end offset (exclusive, on a char boundary) of each token.
pub fn for_each_token(text: &str, mut f: impl FnMut(usize)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        while i < n && CLASS[bytes[i] as usize] == SPACE {
            i += 1;
        }
        if i == n {
            f(i);
            break;
        }
        let word_start = i;
        let limit = n.min(word_start + MAX_TOKEN_BYTES);
        while i < limit && CLASS[bytes[i] as usize] == WORD {
            i += 1;
        }
        if i == word_start {
            // One non-word character: step over the whole UTF-8 sequence.
            i = (i + utf8_len(bytes[i])).min(n);
        }
        f(i);
    }
}

/// Number of tokens in `text` under the rule above.
pub fn count_tokens(text: &str) -> u32 {
    let mut n = 0u32;
    for_each_token(text, |_| n += 1);
    n
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut last = 0;
        for_each_token(text, |end| {
            out.push(&text[last..end]);
            last = end;
        });
        out
    }

    #[test]
    fn words_keep_their_leading_space() {
        assert_eq!(pieces("Hello big world."), ["Hello", " big", " world", "."]);
    }

    #[test]
    fn long_words_split_every_eight_bytes() {
        assert_eq!(pieces("abcdefghijk"), ["abcdefgh", "ijk"]);
    }

    #[test]
    fn json_is_tokenized_per_symbol() {
        assert_eq!(pieces("{\"a\": 1}"), ["{", "\"", "a", "\"", ":", " 1", "}"]);
    }

    #[test]
    fn multibyte_characters_stay_whole() {
        let text = "é ü → ok";
        let p = pieces(text);
        assert_eq!(p.concat(), text);
        assert!(p.iter().all(|s| !s.is_empty()));
    }

    #[test]
    fn trailing_space_is_one_token_and_empty_is_zero() {
        assert_eq!(pieces("a  "), ["a", "  "]);
        assert_eq!(count_tokens(""), 0);
    }

    /// The rule written out plainly, byte by byte: the table-driven loop must cut every
    /// text exactly where it does (token counts are in every usage and cache figure).
    fn plain_ends(text: &str) -> Vec<usize> {
        let b = text.as_bytes();
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 && c & 0xC0 == 0x80;
        let (mut out, mut i) = (Vec::new(), 0);
        while i < b.len() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i == b.len() {
                out.push(i);
                break;
            }
            let start = i;
            while i < b.len() && word(b[i]) && i - start < MAX_TOKEN_BYTES {
                i += 1;
            }
            if i == start {
                i = (i + utf8_len(b[i])).min(b.len());
            }
            out.push(i);
        }
        out
    }

    #[test]
    fn the_table_cuts_where_the_plain_rule_does() {
        let alphabet = [
            " ",
            "\t",
            "\n",
            "_",
            "a",
            "Z9",
            "{",
            "}",
            "\"",
            ":",
            ",",
            "é",
            "漢",
            "😀",
            "-",
            "abcdefghijk",
            "wordé",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..400 {
            let text: String = (0..len % 60)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect::<Vec<_>>()
                .concat();
            let mut ends = Vec::new();
            for_each_token(&text, |e| ends.push(e));
            assert_eq!(ends, plain_ends(&text), "{text:?}");
        }
    }
}
