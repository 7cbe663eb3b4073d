//! The text code's tables: the token prefixes, the two punctuation tables (with the
//! session marker's template in PUNCT_A), the token classes that decide the spaces and
//! capitals, the ID and hex alphabets, and the dictionary (`words.txt`, 1,280 words:
//! 256 of 9 bits, 1,024 of 12). The file's order is the code: it never changes.

use std::collections::HashMap;
use std::sync::OnceLock;

/// How a token spaces and capitalises its neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A word, a number, hex, an id, letters.
    W,
    Close,
    Open,
    Join,
    Space,
    /// The session marker.
    Mark,
}

impl Class {
    /// Takes an automatic space before it (after a token that arms one).
    pub fn space_before(self) -> bool {
        matches!(self, Class::W | Class::Open | Class::Mark)
    }

    /// Arms an automatic space for the next token.
    pub fn space_after(self) -> bool {
        matches!(self, Class::W | Class::Close | Class::Mark)
    }
}

use Class::*;

/// (text, class, ends a sentence). Index 12 is the marker (its text is built).
pub const PUNCT_A: [(&str, Class, bool); 16] = [
    (".", Close, true),
    (",", Close, false),
    ("?", Close, true),
    ("!", Close, true),
    (":", Close, false),
    (";", Close, false),
    ("'", Join, false),
    ("-", Join, false),
    ("(", Open, false),
    (")", Close, false),
    ("\"", Join, false),
    ("/", Join, false),
    ("", Mark, true),
    (" nonce=psn", Join, false),
    (" turn=", Join, false),
    ("]]", Close, true),
];
pub const MARKER_INDEX: usize = 12;

pub const PUNCT_B: [(&str, Class, bool); 32] = [
    (" ", Space, false),
    ("\n", Space, true),
    ("$", Open, false),
    ("%", Close, false),
    ("&", Join, false),
    ("@", Join, false),
    ("#", Open, false),
    ("+", Join, false),
    ("*", Join, false),
    ("=", Join, false),
    ("<", Join, false),
    (">", Join, false),
    ("_", Join, false),
    ("[", Open, false),
    ("]", Close, false),
    ("{", Open, false),
    ("}", Close, false),
    ("|", Join, false),
    ("\\", Join, false),
    ("~", Join, false),
    ("`", Join, false),
    ("[[plimsoll session=", Open, false),
    ("\u{2026}", Close, true),
    ("\u{2019}", Join, false),
    ("\u{2018}", Join, false),
    ("\u{201c}", Open, false),
    ("\u{201d}", Close, false),
    ("\u{2013}", Join, false),
    ("\u{2014}", Join, false),
    ("\u{20ac}", Open, false),
    ("\u{00a3}", Open, false),
    (" nonce=", Join, false),
];

/// Token prefixes (prefix-free), as (bits, length).
pub const P_WORD_A: (u32, usize) = (0b0, 1);
pub const P_WORD_B: (u32, usize) = (0b10, 2);
pub const P_PUNCT_A: (u32, usize) = (0b110, 3);
pub const P_PUNCT_B: (u32, usize) = (0b1110, 4);
pub const P_NUM: (u32, usize) = (0b11110, 5);
pub const P_HEX: (u32, usize) = (0b111110, 6);
pub const P_ID: (u32, usize) = (0b1111110, 7);
pub const P_LETTERS: (u32, usize) = (0b11111110, 8);
pub const P_CASE: (u32, usize) = (0b111111110, 9);
pub const P_GLUE: (u32, usize) = (0b1111111110, 10);
pub const P_BYTE: (u32, usize) = (0b11111111110, 11);

/// Runs a token may hold at most.
pub const NUM_MAX: usize = 16;
pub const HEX_MAX: usize = 32;
pub const ID_MAX: usize = 32;
pub const LET_MAX: usize = 16;

pub const ID_ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz-_";
pub const HEX_ALPHABET: &[u8] = b"0123456789abcdef";

/// Bits for the value of an `n`-digit decimal number: ceil(n·log2 10).
pub fn num_bits(n: usize) -> usize {
    (n as f64 * 10f64.log2() - 1e-9).ceil() as usize
}

/// The dictionary: its words by index, and each word's index.
pub struct Words {
    pub list: Vec<&'static str>,
    pub index: HashMap<&'static str, usize>,
}

pub fn words() -> &'static Words {
    static W: OnceLock<Words> = OnceLock::new();
    W.get_or_init(|| {
        let list: Vec<&'static str> = include_str!("../../words.txt")
            .lines()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        let index = list.iter().enumerate().map(|(i, w)| (*w, i)).collect();
        Words { list, index }
    })
}
