//! A message's frame: the text's bits padded with zeros, a CRC-16/CCITT-FALSE over them,
//! the whole whitened (XOR with a fixed LCG stream, so no text speaks as a monotone), cut
//! into 9-bit syllables and followed by Reed–Solomon parity syllables; and back, the
//! parity filling in the syllables not read and mending those read wrong. A frame whose
//! CRC does not match is no message.

use crate::code::{self, push, Bits};
use crate::rs;
use crate::synth::Symbol;

/// Bits a syllable carries: consonant 2 | vowel 4 | register 1 | contour 2.
pub const SYMBOL_BITS: usize = 9;

/// CRC-16/CCITT-FALSE over bits, most significant first.
pub fn crc16(bits: &[bool]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &b in bits {
        let top = (crc >> 15) as u8 ^ b as u8;
        crc <<= 1;
        if top == 1 {
            crc ^= 0x1021;
        }
    }
    crc
}

/// XOR with the LCG byte stream (x = 1103515245 x + 12345 mod 2^31 from 0x5EED, byte =
/// (x >> 16) & 255, bits most significant first).
pub fn whiten(bits: &[bool]) -> Bits {
    let mut x: u64 = 0x5EED;
    let mut out = Vec::with_capacity(bits.len());
    for chunk in bits.chunks(8) {
        x = (1_103_515_245 * x + 12345) & 0x7FFF_FFFF;
        let pn = ((x >> 16) & 0xFF) as u8;
        for (i, &b) in chunk.iter().enumerate() {
            out.push(b ^ ((pn >> (7 - i)) & 1 == 1));
        }
    }
    out
}

fn to_symbol(b: &[bool]) -> Symbol {
    from_value(b.iter().fold(0u16, |v, &x| v << 1 | x as u16))
}

fn from_value(v: u16) -> Symbol {
    ((v >> 7) as u8 & 3, ((v >> 3) & 15) as u8, (v & 7) as u8)
}

/// A syllable as the 9-bit value it carries: consonant, vowel, pitch class.
pub fn value(s: Symbol) -> u16 {
    ((s.0 as u16) << 7) | ((s.1 as u16) << 3) | s.2 as u16
}

/// Data syllables a Reed–Solomon codeword takes at most, so that its parity fits the
/// field's 511 symbols; a longer message is cut into codewords that take every B-th
/// syllable (interleaved).
const MAX_DATA: usize = 400;

/// Parity syllables for `k` data syllables: 2 and one for every 4 (a quarter more time
/// spoken, for erasures up to that many).
pub fn parity_len(k: usize) -> usize {
    2 + k.div_ceil(4)
}

/// How many codewords `k` data syllables are cut into, and the data syllables of each.
fn codewords(k: usize) -> Vec<usize> {
    let b = k.div_ceil(MAX_DATA).max(1);
    (0..b).map(|i| (k + b - 1 - i) / b).collect()
}

/// Parity syllables a frame keeps unused as a check of its mending: a frame tried at
/// several starts and lengths is refused unless it passes that check and the CRC.
const SPARE: usize = 1;

/// Syllables a frame of `k` data syllables takes, its parity included.
fn framed_len(k: usize) -> usize {
    k + codewords(k).iter().map(|&d| parity_len(d)).sum::<usize>()
}

/// The text as the syllables that carry it (the preamble not included): its data, then
/// each codeword's parity.
pub fn frame(text: &str) -> Option<Vec<Symbol>> {
    let mut bits = code::encode(text)?;
    let pad = (SYMBOL_BITS - (bits.len() + 16) % SYMBOL_BITS) % SYMBOL_BITS;
    bits.extend(std::iter::repeat_n(false, pad));
    let crc = crc16(&bits);
    push(&mut bits, crc as u64, 16);
    let data: Vec<u16> = whiten(&bits)
        .chunks(SYMBOL_BITS)
        .map(|b| value(to_symbol(b)))
        .collect();
    let words = codewords(data.len());
    let b = words.len();
    let mut out: Vec<Symbol> = data.iter().map(|&v| from_value(v)).collect();
    for i in 0..b {
        let mine: Vec<u16> = data.iter().skip(i).step_by(b).copied().collect();
        out.extend(
            rs::parity(&mine, parity_len(mine.len()))
                .into_iter()
                .map(from_value),
        );
    }
    Some(out)
}

/// The data syllables of a frame heard as `heard` (None: not read), mended by its parity;
/// None when the length is no frame's or the damage is past mending.
fn mended(heard: &[Option<Symbol>]) -> Option<Vec<u16>> {
    let n = heard.len();
    let k = (1..n).rev().find(|&k| framed_len(k) == n)?;
    let words = codewords(k);
    let b = words.len();
    let mut data = vec![0u16; k];
    let mut at = k;
    for (i, &d) in words.iter().enumerate() {
        let p = parity_len(d);
        let mut word: Vec<Option<u16>> = (0..d).map(|j| heard[i + j * b].map(value)).collect();
        word.extend(heard[at..at + p].iter().map(|s| s.map(value)));
        at += p;
        let fixed = rs::mend(&word, p, SPARE)?;
        for (j, v) in fixed.into_iter().take(d).enumerate() {
            data[i + j * b] = v;
        }
    }
    Some(data)
}

/// The text the syllables carry (None where one was not read), or None when the parity
/// cannot mend them or their CRC or their tokens are wrong.
pub fn unframe(heard: &[Option<Symbol>]) -> Option<String> {
    let mut bits = Bits::new();
    for v in mended(heard)? {
        push(&mut bits, v as u64, SYMBOL_BITS);
    }
    let f = whiten(&bits);
    let (payload, crc) = f.split_at(f.len().checked_sub(16)?);
    let got = crc.iter().fold(0u16, |v, &b| v << 1 | b as u16);
    if crc16(payload) != got {
        return None;
    }
    code::decode(payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crc_and_the_whitening_are_the_specs() {
        let mut bits = Bits::new();
        for b in b"123456789" {
            push(&mut bits, *b as u64, 8);
        }
        assert_eq!(crc16(&bits), 0x29B1);
        let stream: String = whiten(&[false; 32])
            .iter()
            .map(|b| if *b { '1' } else { '0' })
            .collect();
        assert_eq!(stream, "01100010000101111011011000010000");
    }

    fn heard(s: &[Symbol]) -> Vec<Option<Symbol>> {
        s.iter().map(|&x| Some(x)).collect()
    }

    #[test]
    fn a_frame_round_trips_and_its_parity_mends_what_was_lost() {
        let t = "[[plimsoll session=3f9a1c-s12 nonce=psn0f3a9b2c4d5e6f71 turn=3]] Please handle turn 3.";
        let s = frame(t).unwrap();
        // 190 bits, one of padding and the CRC: 23 data syllables, then 8 of parity.
        assert_eq!(s.len(), 23 + 8);
        assert_eq!(unframe(&heard(&s)).as_deref(), Some(t));
        let mut h = heard(&s);
        for j in [0, 5, 9, 17, 20, 22, 30] {
            h[j] = None;
        }
        h[12] = Some((h[12].unwrap().0, h[12].unwrap().1 ^ 1, 0));
        assert_eq!(
            unframe(&h).as_deref(),
            None,
            "7 erasures and an error: 9 > 8"
        );
        h[30] = Some(s[30]);
        assert_eq!(
            unframe(&h),
            None,
            "6 erasures and an error: 8, none to spare"
        );
        h[22] = Some(s[22]);
        assert_eq!(unframe(&h).as_deref(), Some(t), "5 erasures and an error");
        assert_eq!(
            unframe(&h[..h.len() - 1]),
            None,
            "a frame one syllable short"
        );
    }

    #[test]
    fn frames_of_any_length_and_damage_are_refused_without_a_panic() {
        let mut x: u32 = 9;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for n in 0..80 {
            for _ in 0..20 {
                let h: Vec<Option<Symbol>> = (0..n)
                    .map(|_| match next() % 4 {
                        0 => None,
                        _ => Some(from_value((next() % 512) as u16)),
                    })
                    .collect();
                assert_eq!(unframe(&h), None, "{n} random syllables");
            }
        }
    }

    #[test]
    fn a_long_message_is_cut_into_interleaved_codewords() {
        let t = "word ".repeat(900);
        let s = frame(t.trim_end()).unwrap();
        assert!(s.len() > rs::MAX_LEN, "{} syllables in all", s.len());
        let mut h = heard(&s);
        for j in (0..s.len()).step_by(7) {
            h[j] = None;
        }
        assert_eq!(unframe(&h).as_deref(), Some(t.trim_end()));
    }
}
