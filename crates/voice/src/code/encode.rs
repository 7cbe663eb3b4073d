//! The cheapest token sequence for a text: dynamic programming over (byte position,
//! automatic space armed, sentence start). From each state every token whose rendering
//! matches the text there is tried — dictionary words (as stored, or capitalised, with a
//! CASE prefix when the sentence rule disagrees), the marker, punctuation, runs of
//! digits, hex, id characters and letters, and a raw byte — with a GLUE prefix where a
//! token that would take an automatic space has none in the text. Candidates are found
//! once per position and carry only their cost; bits are written for the chosen path
//! alone.

use super::tables::*;
use super::{id_pack, push, Bits};

/// What a candidate token writes.
#[derive(Clone, Copy, Debug)]
enum Emit {
    Word(usize),
    Marker {
        session: (usize, usize),
        nonce: usize,
        turn: (usize, u64),
    },
    PunctA(usize),
    PunctB(usize),
    Num,
    Hex,
    Id,
    Letters,
    Byte,
}

/// A candidate token at a position: its bits' count, what it writes, its span.
#[derive(Clone, Copy, Debug)]
struct Tok {
    cost: usize,
    emit: Emit,
    len: usize,
    cls: Class,
    /// Ends a sentence (non-word tokens).
    sent: bool,
    /// Subject to the capital rule; `Some(upper)` when its first letter is cased.
    casey: Option<Option<bool>>,
}

/// One step of the chosen path: the token at `at`, and the prefixes before it.
#[derive(Clone, Copy)]
struct Step {
    from: (usize, usize),
    at: usize,
    tok: Tok,
    glue: bool,
    case: bool,
}

/// The text as bits, the cheapest way; None only for a text no token can cover (none:
/// a raw byte covers anything).
pub fn encode(text: &str) -> Option<Bits> {
    let b = text.as_bytes();
    let n = b.len();
    let mut best = vec![[usize::MAX; 4]; n + 1];
    let mut back: Vec<[Option<Step>; 4]> = vec![[None; 4]; n + 1];
    let mut cands: Vec<Option<Vec<Tok>>> = vec![None; n];
    best[0][1] = 0; // no space armed, at a sentence's start
    for q in 0..n {
        for st in 0..4 {
            let cost = best[q][st];
            if cost == usize::MAX {
                continue;
            }
            let (a, s) = (st >> 1 == 1, st & 1 == 1);
            let mut starts = [(q, false), (usize::MAX, true)];
            if a && b[q] == b' ' && q + 1 < n {
                starts[1].0 = q + 1; // the automatic space consumed
            }
            for (qq, spaced) in starts {
                if qq == usize::MAX {
                    continue;
                }
                let list = cands[qq].get_or_insert_with(|| candidates(b, qq));
                for tok in list.iter() {
                    let wants = tok.cls.space_before() && a;
                    if spaced && !wants {
                        continue;
                    }
                    let glue = wants && !spaced;
                    let case = matches!(tok.casey, Some(Some(upper)) if s != upper);
                    let bits = tok.cost
                        + if glue { P_GLUE.1 } else { 0 }
                        + if case { P_CASE.1 } else { 0 };
                    let end = qq + tok.len;
                    let na = tok.cls.space_after();
                    let ns = match tok.cls {
                        Class::W => false,
                        _ if tok.sent && tok.casey.is_none() => true,
                        _ => s,
                    };
                    let nst = (na as usize) * 2 + ns as usize;
                    if cost + bits < best[end][nst] {
                        best[end][nst] = cost + bits;
                        back[end][nst] = Some(Step {
                            from: (q, st),
                            at: qq,
                            tok: *tok,
                            glue,
                            case,
                        });
                    }
                }
            }
        }
    }
    let st = (0..4).min_by_key(|&s| best[n][s])?;
    if best[n][st] == usize::MAX {
        return None;
    }
    let mut path = Vec::new();
    let (mut q, mut st) = (n, st);
    while q > 0 {
        let step = back[q][st]?;
        path.push(step);
        (q, st) = step.from;
    }
    let mut out = Bits::with_capacity(best[n].iter().copied().min().unwrap_or(0));
    for step in path.iter().rev() {
        if step.glue {
            push(&mut out, P_GLUE.0 as u64, P_GLUE.1);
        }
        if step.case {
            push(&mut out, P_CASE.0 as u64, P_CASE.1);
        }
        write(&mut out, b, step.at, &step.tok);
    }
    Some(out)
}

/// Writes a token's bits.
fn write(out: &mut Bits, b: &[u8], at: usize, t: &Tok) {
    let run = &b[at..at + t.len];
    let pre = |out: &mut Bits, p: (u32, usize)| push(out, p.0 as u64, p.1);
    match t.emit {
        Emit::Word(i) if i < 256 => {
            pre(out, P_WORD_A);
            push(out, i as u64, 8);
        }
        Emit::Word(i) => {
            pre(out, P_WORD_B);
            push(out, (i - 256) as u64, 10);
        }
        Emit::Marker {
            session,
            nonce,
            turn,
        } => {
            pre(out, P_PUNCT_A);
            push(out, MARKER_INDEX as u64, 4);
            push(out, (session.1 - 1) as u64, 5);
            id_pack(out, &b[session.0..session.0 + session.1]);
            for c in &b[nonce..nonce + 16] {
                push(out, hex(*c), 4);
            }
            push(out, (turn.0 - 1) as u64, 3);
            push(out, turn.1, num_bits(turn.0));
        }
        Emit::PunctA(i) => {
            pre(out, P_PUNCT_A);
            push(out, i as u64, 4);
        }
        Emit::PunctB(i) => {
            pre(out, P_PUNCT_B);
            push(out, i as u64, 5);
        }
        Emit::Num => {
            pre(out, P_NUM);
            push(out, (t.len - 1) as u64, 4);
            push(out, digits(run), num_bits(t.len));
        }
        Emit::Hex => {
            pre(out, P_HEX);
            push(out, (t.len - 1) as u64, 5);
            for c in run {
                push(out, hex(*c), 4);
            }
        }
        Emit::Id => {
            pre(out, P_ID);
            push(out, (t.len - 1) as u64, 5);
            id_pack(out, run);
        }
        Emit::Letters => {
            pre(out, P_LETTERS);
            push(out, (t.len - 1) as u64, 4);
            for c in run {
                push(out, (c.to_ascii_lowercase() - b'a') as u64, 5);
            }
        }
        Emit::Byte => {
            pre(out, P_BYTE);
            push(out, run[0] as u64, 8);
        }
    }
}

fn hex(c: u8) -> u64 {
    HEX_ALPHABET.iter().position(|h| *h == c).unwrap_or(0) as u64
}

fn digits(run: &[u8]) -> u64 {
    run.iter().fold(0u64, |v, c| v * 10 + (c - b'0') as u64)
}

/// The packed length of an id of `n` characters.
fn id_bits(n: usize) -> usize {
    16 * (n / 3) + [0, 6, 11][n % 3]
}

/// Every token whose rendering starts at byte `q`.
fn candidates(b: &[u8], q: usize) -> Vec<Tok> {
    let mut out = Vec::new();
    words_at(b, q, &mut out);
    if let Some(t) = marker_at(b, q) {
        out.push(t);
    }
    for (i, (txt, cls, sent)) in PUNCT_A.iter().enumerate() {
        if !txt.is_empty() && b[q..].starts_with(txt.as_bytes()) {
            out.push(Tok {
                cost: P_PUNCT_A.1 + 4,
                emit: Emit::PunctA(i),
                len: txt.len(),
                cls: *cls,
                sent: *sent,
                casey: None,
            });
        }
    }
    for (i, (txt, cls, sent)) in PUNCT_B.iter().enumerate() {
        if b[q..].starts_with(txt.as_bytes()) {
            out.push(Tok {
                cost: P_PUNCT_B.1 + 5,
                emit: Emit::PunctB(i),
                len: txt.len(),
                cls: *cls,
                sent: *sent,
                casey: None,
            });
        }
    }
    runs_at(b, q, &mut out);
    out.push(Tok {
        cost: P_BYTE.1 + 8,
        emit: Emit::Byte,
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
    let mut lower = String::new();
    for len in 1..=24.min(b.len() - q) {
        let s = &b[q..q + len];
        if !s[len - 1].is_ascii() {
            break;
        }
        let Ok(st) = std::str::from_utf8(s) else {
            break;
        };
        let first_upper = s[0].is_ascii_uppercase();
        lower.clear();
        if first_upper {
            lower.push(s[0].to_ascii_lowercase() as char);
            lower.push_str(&st[1..]);
        }
        let forms: [(Option<&str>, bool); 2] = [
            (Some(st), false),
            (first_upper.then_some(lower.as_str()), true),
        ];
        for (form, need_cap) in forms {
            let Some(form) = form else { continue };
            let Some(&i) = w.index.get(form) else {
                continue;
            };
            // A word whose first letter has no capital (an "I", a digit) is neutral.
            let cased = form.as_bytes()[0].is_ascii_lowercase();
            let casey = if cased { Some(need_cap) } else { None };
            let cost = if i < 256 {
                P_WORD_A.1 + 8
            } else {
                P_WORD_B.1 + 10
            };
            out.push(Tok {
                cost,
                emit: Emit::Word(i),
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
    const OPEN: &[u8] = b"[[plimsoll session=";
    let rest = b[q..].strip_prefix(OPEN)?;
    let sl = rest.iter().take_while(|c| ID_ALPHABET.contains(c)).count();
    if sl == 0 || sl > 32 {
        return None;
    }
    let rest = rest[sl..].strip_prefix(b" nonce=psn")?;
    if rest.len() < 16 || !rest[..16].iter().all(|c| HEX_ALPHABET.contains(c)) {
        return None;
    }
    let rest = rest[16..].strip_prefix(b" turn=")?;
    let tl = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if tl == 0 || tl > 8 || !rest[tl..].starts_with(b"]]") {
        return None;
    }
    let session = (q + OPEN.len(), sl);
    let nonce = session.0 + sl + b" nonce=psn".len();
    let turn = (tl, digits(&rest[..tl]));
    let len = OPEN.len() + sl + b" nonce=psn".len() + 16 + b" turn=".len() + tl + 2;
    let cost = P_PUNCT_A.1 + 4 + 5 + id_bits(sl) + 64 + 3 + num_bits(tl);
    Some(Tok {
        cost,
        emit: Emit::Marker {
            session,
            nonce,
            turn,
        },
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
    let word = |cost, emit, len| Tok {
        cost,
        emit,
        len,
        cls: Class::W,
        sent: false,
        casey: None,
    };
    for len in 1..=run(&|c| c.is_ascii_digit(), NUM_MAX) {
        out.push(word(P_NUM.1 + 4 + num_bits(len), Emit::Num, len));
    }
    for len in 1..=run(&|c| HEX_ALPHABET.contains(&c), HEX_MAX) {
        out.push(word(P_HEX.1 + 5 + 4 * len, Emit::Hex, len));
    }
    for len in 1..=run(&|c| ID_ALPHABET.contains(&c), ID_MAX) {
        out.push(word(P_ID.1 + 5 + id_bits(len), Emit::Id, len));
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
        out.push(Tok {
            cost: P_LETTERS.1 + 4 + 5 * len,
            emit: Emit::Letters,
            len,
            cls: Class::W,
            sent: false,
            casey: Some(Some(first_upper)),
        });
    }
}
