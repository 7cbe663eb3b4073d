//! The token approximation used for `usage` and for cutting streams into chunks.
//!
//! Real tokenizers are model-specific and large; the mock only needs counts that
//! grow like real ones. The rule: a token is a word (letters and digits) with the
//! white space before it, a word longer than 8 bytes counts once per 8 bytes, and
//! every other character (punctuation, a quote, a brace) is a token of its own.
//! English prose comes out near 1.3 tokens per word, close to BPE tokenizers.

const MAX_TOKEN_BYTES: usize = 8;

/// Calls `f` with the end offset (exclusive, on a char boundary) of each token.
pub fn for_each_token(text: &str, mut f: impl FnMut(usize)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == bytes.len() {
            f(i);
            break;
        }
        let word_start = i;
        while i < bytes.len() && is_word_byte(bytes[i]) && i - word_start < MAX_TOKEN_BYTES {
            i += 1;
        }
        if i == word_start {
            // One non-word character: step over the whole UTF-8 sequence.
            i += utf8_len(bytes[i]);
            i = i.min(bytes.len());
        }
        debug_assert!(i > start);
        f(i);
    }
}

/// Number of tokens in `text` under the rule above.
pub fn count_tokens(text: &str) -> u32 {
    let mut n = 0u32;
    for_each_token(text, |_| n += 1);
    n
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 && b & 0xC0 == 0x80
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
}
