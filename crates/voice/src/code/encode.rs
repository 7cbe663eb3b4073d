//! The cheapest token sequence for a text: dynamic programming over (byte position,
//! automatic space armed, sentence start). From each state every token whose rendering
//! matches the text there is tried — dictionary words (as stored, or capitalised, with a
//! CASE prefix when the sentence rule disagrees), the marker, punctuation, runs of
//! digits, hex, id characters and letters, and a raw byte — with a GLUE prefix where a
//! token that would take an automatic space has none in the text.

use super::tables::*;
use super::{id_pack, push, Bits};

/// A candidate token at a position.
struct Tok {
    bits: Bits,
    len: usize,
    cls: Class,
    /// Ends a sentence (non-word tokens).
    sent: bool,
    /// Subject to the capital rule; `Some(upper)` when its first letter is cased.
    casey: Option<Option<bool>>,
}

fn code(prefix: (u32, usize)) -> Bits {
    let mut b = Bits::new();
    push(&mut b, prefix.0 as u64, prefix.1);
    b
}

/// The text as bits, the cheapest way; None only for a text no token can cover (none:
/// a raw byte covers anything).
pub fn encode(text: &str) -> Option<Bits> {
    let b = text.as_bytes();
    let n = b.len();
    let mut best = vec![[usize::MAX; 4]; n + 1];
    let mut back: Vec<[Option<(usize, usize, Bits)>; 4]> =
        (0..=n).map(|_| Default::default()).collect();
    best[0][1] = 0; // no space armed, at a sentence's start
    for q in 0..n {
        for st in 0..4 {
            let cost = best[q][st];
            if cost == usize::MAX {
                continue;
            }
            let (a, s) = (st >> 1 == 1, st & 1 == 1);
            let mut starts = vec![(q, false)];
            if a && b[q] == b' ' && q + 1 < n {
                starts.push((q + 1, true)); // the automatic space consumed
            }
            for (qq, spaced) in starts {
                for tok in candidates(b, qq) {
                    let wants = tok.cls.space_before() && a;
                    if spaced && !wants {
                        continue;
                    }
                    let mut bits = Bits::new();
                    if wants && !spaced {
                        bits.extend(code(P_GLUE));
                    }
                    if let Some(Some(upper)) = tok.casey {
                        if s != upper {
                            bits.extend(code(P_CASE));
                        }
                    }
                    bits.extend(&tok.bits);
                    let end = qq + tok.len;
                    let na = tok.cls.space_after();
                    let ns = if tok.cls != Class::W && tok.sent && tok.casey.is_none() {
                        true
                    } else if tok.cls == Class::W {
                        false
                    } else {
                        s
                    };
                    let nst = (na as usize) * 2 + ns as usize;
                    let c = cost + bits.len();
                    if c < best[end][nst] {
                        best[end][nst] = c;
                        back[end][nst] = Some((q, st, bits));
                    }
                }
            }
        }
    }
    let st = (0..4).min_by_key(|&s| best[n][s])?;
    if best[n][st] == usize::MAX {
        return None;
    }
    let mut parts = Vec::new();
    let (mut q, mut st) = (n, st);
    while q > 0 {
        let (pq, pst, bits) = back[q][st].clone()?;
        parts.push(bits);
        q = pq;
        st = pst;
    }
    Some(parts.into_iter().rev().flatten().collect())
}

/// Every token whose rendering starts at byte `q`.
fn candidates(b: &[u8], q: usize) -> Vec<Tok> {
    let mut out = Vec::new();
    words_at(b, q, &mut out);
    if let Some(t) = marker_at(b, q) {
        out.push(t);
    }
    for (table, prefix, width) in [(&PUNCT_A[..], P_PUNCT_A, 4), (&PUNCT_B[..], P_PUNCT_B, 5)] {
        for (i, (txt, cls, sent)) in table.iter().enumerate() {
            if !txt.is_empty() && b[q..].starts_with(txt.as_bytes()) {
                let mut bits = code(prefix);
                push(&mut bits, i as u64, width);
                out.push(Tok {
                    bits,
                    len: txt.len(),
                    cls: *cls,
                    sent: *sent,
                    casey: None,
                });
            }
        }
    }
    runs_at(b, q, &mut out);
    let mut bits = code(P_BYTE);
    push(&mut bits, b[q] as u64, 8);
    out.push(Tok {
        bits,
        len: 1,
        cls: Class::Join,
        sent: false,
        casey: None,
    });
    out
}

/// Dictionary words at `q`, as stored or with their first letter capitalised.
fn words_at(b: &[u8], q: usize, out: &mut Vec<Tok>) {
    let w = words();
    for len in 1..=24.min(b.len() - q) {
        let s = &b[q..q + len];
        if !s.is_ascii() {
            break;
        }
        let Ok(st) = std::str::from_utf8(s) else {
            break;
        };
        let lower = format!("{}{}", st[..1].to_ascii_lowercase(), &st[1..]);
        for (form, need_cap) in [(st, false), (lower.as_str(), true)] {
            if need_cap && form == st {
                continue;
            }
            let Some(&i) = w.index.get(form) else {
                continue;
            };
            let mut bits;
            if i < 256 {
                bits = code(P_WORD_A);
                push(&mut bits, i as u64, 8);
            } else {
                bits = code(P_WORD_B);
                push(&mut bits, (i - 256) as u64, 10);
            }
            let capitalised = format!("{}{}", form[..1].to_ascii_uppercase(), &form[1..]);
            let casey = if capitalised == form {
                None
            } else {
                Some(need_cap)
            };
            out.push(Tok {
                bits,
                len,
                cls: Class::W,
                sent: false,
                casey: Some(casey),
            });
        }
    }
}

/// `[[plimsoll session=ID nonce=psn<16 hex> turn=N]]` at `q`, as the marker token.
fn marker_at(b: &[u8], q: usize) -> Option<Tok> {
    let rest = &b[q..];
    let rest = rest.strip_prefix(b"[[plimsoll session=")?;
    let sl = rest.iter().take_while(|c| ID_ALPHABET.contains(c)).count();
    if sl == 0 || sl > 32 {
        return None;
    }
    let (session, rest) = rest.split_at(sl);
    let rest = rest.strip_prefix(b" nonce=psn")?;
    if rest.len() < 16 || !rest[..16].iter().all(|c| HEX_ALPHABET.contains(c)) {
        return None;
    }
    let (nonce, rest) = rest.split_at(16);
    let rest = rest.strip_prefix(b" turn=")?;
    let tl = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if tl == 0 || tl > 8 || !rest[tl..].starts_with(b"]]") {
        return None;
    }
    let turn: u64 = std::str::from_utf8(&rest[..tl]).ok()?.parse().ok()?;
    let mut bits = code(P_PUNCT_A);
    push(&mut bits, MARKER_INDEX as u64, 4);
    push(&mut bits, (sl - 1) as u64, 5);
    id_pack(&mut bits, session);
    for c in nonce {
        push(
            &mut bits,
            HEX_ALPHABET.iter().position(|h| h == c)? as u64,
            4,
        );
    }
    push(&mut bits, (tl - 1) as u64, 3);
    push(&mut bits, turn, num_bits(tl));
    let len =
        b"[[plimsoll session=".len() + sl + b" nonce=psn".len() + 16 + b" turn=".len() + tl + 2;
    Some(Tok {
        bits,
        len,
        cls: Class::Mark,
        sent: true,
        casey: None,
    })
}

/// Runs of digits, hex, id characters and letters at `q`, every length.
fn runs_at(b: &[u8], q: usize, out: &mut Vec<Tok>) {
    let run = |ok: &dyn Fn(u8) -> bool, max: usize| {
        b[q..].iter().take(max).take_while(|c| ok(**c)).count()
    };
    for len in 1..=run(&|c| c.is_ascii_digit(), NUM_MAX) {
        let v: u64 = std::str::from_utf8(&b[q..q + len])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut bits = code(P_NUM);
        push(&mut bits, (len - 1) as u64, 4);
        push(&mut bits, v, num_bits(len));
        out.push(Tok {
            bits,
            len,
            cls: Class::W,
            sent: false,
            casey: None,
        });
    }
    for len in 1..=run(&|c| HEX_ALPHABET.contains(&c), HEX_MAX) {
        let mut bits = code(P_HEX);
        push(&mut bits, (len - 1) as u64, 5);
        for c in &b[q..q + len] {
            push(
                &mut bits,
                HEX_ALPHABET.iter().position(|h| h == c).unwrap_or(0) as u64,
                4,
            );
        }
        out.push(Tok {
            bits,
            len,
            cls: Class::W,
            sent: false,
            casey: None,
        });
    }
    for len in 1..=run(&|c| ID_ALPHABET.contains(&c), ID_MAX) {
        let mut bits = code(P_ID);
        push(&mut bits, (len - 1) as u64, 5);
        id_pack(&mut bits, &b[q..q + len]);
        out.push(Tok {
            bits,
            len,
            cls: Class::W,
            sent: false,
            casey: None,
        });
    }
    // Letters: lowercase, the first may be upper (the capital rule or a CASE).
    let first_upper = b[q].is_ascii_uppercase();
    let letters = b[q..]
        .iter()
        .take(LET_MAX)
        .enumerate()
        .take_while(|(i, c)| c.is_ascii_lowercase() || (*i == 0 && first_upper))
        .count();
    for len in 1..=letters {
        let mut bits = code(P_LETTERS);
        push(&mut bits, (len - 1) as u64, 4);
        for c in &b[q..q + len] {
            push(&mut bits, (c.to_ascii_lowercase() - b'a') as u64, 5);
        }
        out.push(Tok {
            bits,
            len,
            cls: Class::W,
            sent: false,
            casey: Some(Some(first_upper)),
        });
    }
}
