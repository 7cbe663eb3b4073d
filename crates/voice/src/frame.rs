//! A message's frame: the text's bits padded with zeros, a CRC-16/CCITT-FALSE over them,
//! the whole whitened (XOR with a fixed LCG stream, so no text speaks as a monotone) and
//! cut into 9-bit syllables; and back. A frame whose CRC does not match is no message.

use crate::code::{self, push, Bits};
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
    let v = b.iter().fold(0u16, |v, &x| v << 1 | x as u16);
    ((v >> 7) as u8, ((v >> 3) & 15) as u8, (v & 7) as u8)
}

fn from_symbol(s: Symbol, out: &mut Bits) {
    push(
        out,
        ((s.0 as u64) << 7) | ((s.1 as u64) << 3) | s.2 as u64,
        SYMBOL_BITS,
    );
}

/// The text as the syllables that carry it (the preamble not included).
pub fn frame(text: &str) -> Option<Vec<Symbol>> {
    let mut bits = code::encode(text)?;
    let pad = (SYMBOL_BITS - (bits.len() + 16) % SYMBOL_BITS) % SYMBOL_BITS;
    bits.extend(std::iter::repeat_n(false, pad));
    let crc = crc16(&bits);
    push(&mut bits, crc as u64, 16);
    Some(whiten(&bits).chunks(SYMBOL_BITS).map(to_symbol).collect())
}

/// The text the syllables carry, or None when their CRC or their tokens are wrong.
pub fn unframe(symbols: &[Symbol]) -> Option<String> {
    if symbols.len() < 2 {
        return None;
    }
    let mut bits = Bits::new();
    for &s in symbols {
        from_symbol(s, &mut bits);
    }
    let f = whiten(&bits);
    let (payload, crc) = f.split_at(f.len() - 16);
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

    #[test]
    fn a_frame_round_trips_and_a_flipped_syllable_is_refused() {
        let t = "[[plimsoll session=3f9a1c-s12 nonce=psn0f3a9b2c4d5e6f71 turn=3]] Please handle turn 3.";
        let mut s = frame(t).unwrap();
        assert_eq!(unframe(&s).as_deref(), Some(t));
        s[3].1 ^= 1;
        assert_eq!(unframe(&s), None);
    }
}
