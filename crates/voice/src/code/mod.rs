//! Text as bits: a static, prefix-free token code (dictionary words of 9 or 12 bits,
//! punctuation, numbers, hex, ids, letters, a raw byte for anything else, and the whole
//! session marker `[[plimsoll session=… nonce=psn… turn=…]]` as one token), about 2 bits
//! a character of ordinary English. Spaces and sentence capitals are implied by the
//! tokens' classes; `encode` finds the cheapest token sequence (dynamic programming over
//! the position and the spacing state), `decode` reads it back or says it cannot.

mod encode;
mod tables;

pub use encode::encode;
use tables::*;

/// Bits, most significant first.
pub type Bits = Vec<bool>;

/// Appends `v` as `width` bits.
pub fn push(out: &mut Bits, v: u64, width: usize) {
    for i in (0..width).rev() {
        out.push((v >> i) & 1 == 1);
    }
}

/// The decoder's state: auto-space armed, at a sentence's start, a glue and a case flip
/// pending.
struct State {
    out: Vec<u8>,
    a: bool,
    s: bool,
    glue: bool,
    flip: bool,
}

impl State {
    fn emit(&mut self, text: &[u8], cls: Class, sentence_end: bool, casey: bool) {
        if cls.space_before() && self.a && !self.glue {
            self.out.push(b' ');
        }
        if casey && (self.s != self.flip) {
            self.out.push(text[0].to_ascii_uppercase());
            self.out.extend_from_slice(&text[1..]);
        } else {
            self.out.extend_from_slice(text);
        }
        if cls == Class::W {
            self.flip = false;
        }
        self.glue = false;
        self.a = cls.space_after();
        if cls != Class::W && sentence_end {
            self.s = true;
        } else if cls == Class::W {
            self.s = false;
        }
    }
}

/// A reader of bits.
struct Reader<'a> {
    bits: &'a [bool],
    i: usize,
}

impl Reader<'_> {
    fn take(&mut self, k: usize) -> Option<u64> {
        if self.i + k > self.bits.len() {
            return None;
        }
        let v = self.bits[self.i..self.i + k]
            .iter()
            .fold(0u64, |v, &b| v << 1 | b as u64);
        self.i += k;
        Some(v)
    }

    fn starts(&self, p: (u32, usize)) -> bool {
        let (v, w) = p;
        self.i + w <= self.bits.len()
            && (0..w).all(|k| self.bits[self.i + k] == ((v >> (w - 1 - k)) & 1 == 1))
    }
}

/// The bits as text, or None when they are not a well-formed message.
pub fn decode(bits: &[bool]) -> Option<String> {
    let mut st = State {
        out: Vec::new(),
        a: false,
        s: true,
        glue: false,
        flip: false,
    };
    let mut r = Reader { bits, i: 0 };
    let w = words();
    while r.i < bits.len() {
        if bits.len() - r.i < 9 && bits[r.i..].iter().all(|b| !b) {
            break; // the zero padding
        }
        token(&mut r, &mut st, w)?;
    }
    String::from_utf8(st.out).ok()
}

/// Reads one token at the reader and emits it.
fn token(r: &mut Reader, st: &mut State, w: &Words) -> Option<()> {
    if r.starts(P_WORD_A) {
        r.i += 1;
        let k = r.take(8)? as usize;
        st.emit(w.list.get(k)?.as_bytes(), Class::W, false, true);
    } else if r.starts(P_WORD_B) {
        r.i += 2;
        let k = 256 + r.take(10)? as usize;
        st.emit(w.list.get(k)?.as_bytes(), Class::W, false, true);
    } else if r.starts(P_PUNCT_A) {
        r.i += 3;
        let k = r.take(4)? as usize;
        let (txt, cls, end) = PUNCT_A[k];
        match k {
            MARKER_INDEX => st.emit(marker(r)?.as_bytes(), cls, end, false),
            _ => st.emit(txt.as_bytes(), cls, end, false),
        }
    } else if r.starts(P_PUNCT_B) {
        r.i += 4;
        let (txt, cls, end) = PUNCT_B[r.take(5)? as usize];
        st.emit(txt.as_bytes(), cls, end, false);
    } else if r.starts(P_NUM) {
        r.i += 5;
        let n = r.take(4)? as usize + 1;
        let v = r.take(num_bits(n))?;
        if v >= 10u64.pow(n as u32) {
            return None;
        }
        st.emit(format!("{v:0n$}").as_bytes(), Class::W, false, false);
    } else if r.starts(P_HEX) {
        r.i += 6;
        let n = r.take(5)? as usize + 1;
        let s: Option<Vec<u8>> = (0..n)
            .map(|_| Some(HEX_ALPHABET[r.take(4)? as usize]))
            .collect();
        st.emit(&s?, Class::W, false, false);
    } else if r.starts(P_ID) {
        r.i += 7;
        let n = r.take(5)? as usize + 1;
        st.emit(id_unpack(r, n)?.as_bytes(), Class::W, false, false);
    } else if r.starts(P_LETTERS) {
        r.i += 8;
        let n = r.take(4)? as usize + 1;
        let s: Option<Vec<u8>> = (0..n)
            .map(|_| r.take(5).filter(|v| *v < 26).map(|v| b'a' + v as u8))
            .collect();
        st.emit(&s?, Class::W, false, true);
    } else if r.starts(P_CASE) {
        r.i += 9;
        st.flip = !st.flip;
    } else if r.starts(P_GLUE) {
        r.i += 10;
        st.glue = true;
    } else if r.starts(P_BYTE) {
        r.i += 11;
        st.emit(&[r.take(8)? as u8], Class::Join, false, false);
    } else {
        return None;
    }
    Some(())
}

/// The marker template's payload: session (an id), nonce (16 hex digits), turn.
fn marker(r: &mut Reader) -> Option<String> {
    let n = r.take(5)? as usize + 1;
    let session = id_unpack(r, n)?;
    let nonce: Option<String> = (0..16)
        .map(|_| Some(HEX_ALPHABET[r.take(4)? as usize] as char))
        .collect();
    let digits = r.take(3)? as usize + 1;
    let turn = r.take(num_bits(digits))?;
    if turn >= 10u64.pow(digits as u32) {
        return None;
    }
    Some(format!(
        "[[plimsoll session={session} nonce=psn{} turn={turn:0digits$}]]",
        nonce?
    ))
}

/// `n` characters of the id alphabet, packed three to 16 bits.
fn id_unpack(r: &mut Reader, n: usize) -> Option<String> {
    let mut idx: Vec<u64> = Vec::with_capacity(n);
    for _ in 0..n / 3 {
        let v = r.take(16)?;
        if v >= 38 * 38 * 38 {
            return None;
        }
        idx.extend([v / 1444, (v / 38) % 38, v % 38]);
    }
    match n % 3 {
        1 => idx.push(r.take(6)?),
        2 => {
            let v = r.take(11)?;
            idx.extend([v / 38, v % 38]);
        }
        _ => {}
    }
    idx.iter()
        .map(|&i| ID_ALPHABET.get(i as usize).map(|c| *c as char))
        .collect()
}

/// Packs an id (every byte in the id alphabet).
pub(crate) fn id_pack(out: &mut Bits, s: &[u8]) {
    let v: Vec<u64> = s
        .iter()
        .map(|c| ID_ALPHABET.iter().position(|a| a == c).unwrap_or(0) as u64)
        .collect();
    let full = v.len() - v.len() % 3;
    for ch in v[..full].chunks(3) {
        push(out, ch[0] * 1444 + ch[1] * 38 + ch[2], 16);
    }
    match &v[full..] {
        [a] => push(out, *a, 6),
        [a, b] => push(out, a * 38 + b, 11),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(s: &str) -> Bits {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c == '1')
            .collect()
    }

    #[test]
    fn the_specs_example_decodes_and_encodes_to_its_68_bits() {
        // SPEC §2.4: "Sure, I can help with that." = 68 bits.
        let b = bits(
            "0 00111100 110 0001 0 00000110 0 00010001 0 00110100 0 00001111 0 00001010 110 0000",
        );
        assert_eq!(decode(&b).as_deref(), Some("Sure, I can help with that."));
        assert_eq!(encode("Sure, I can help with that.").unwrap().len(), 68);
    }

    #[test]
    fn a_marker_utterance_is_190_bits_and_round_trips() {
        let t = "[[plimsoll session=3f9a1c-s12 nonce=psn0f3a9b2c4d5e6f71 turn=3]] Please handle turn 3.";
        let b = encode(t).unwrap();
        assert_eq!(b.len(), 190);
        assert_eq!(decode(&b).as_deref(), Some(t));
    }

    #[test]
    fn any_text_round_trips() {
        for t in [
            "",
            "Hello.",
            "x",
            "The agent plans a careful answer with tools and memory.",
            "Ünïcödé — “quotes” and €5, 12.5% of 1,000!",
            "ABC def GHI",
            "a  b",
            "tab\tend",
            "order #4521 for zq9k-x_y",
            "deadbeef 0123 id=7f3a",
            "\n\nnew lines\n",
        ] {
            let b = encode(t).unwrap();
            assert_eq!(decode(&b).as_deref(), Some(t), "{t:?}");
        }
        // Bits that are no message say so.
        assert_eq!(decode(&bits("11111111111")), None);
    }
}
