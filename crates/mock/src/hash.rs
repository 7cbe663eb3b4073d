//! Stable hashes: the same bytes give the same number on every run and every Rust
//! version, so a request maps to the same RNG and a text to the same ledger key.

/// FNV-1a: a stable hash, so the same request maps to the same RNG on every run and
/// every Rust version.
pub fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A hash fed in pieces: the same bytes in the same order give the same number however
/// they were cut, so a prefix's hash can be read at any point of one pass over it. Eight
/// bytes at a time through a 128-bit multiply (the prompt cache hashes every request's
/// whole prompt, so this is on every call's path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Running {
    h: u64,
    /// Bytes not yet a whole word, little-endian, and how many.
    tail: u64,
    n: u32,
}

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;

fn mum(a: u64, b: u64) -> u64 {
    let r = (a as u128).wrapping_mul(b as u128);
    (r as u64) ^ ((r >> 64) as u64)
}

impl Running {
    pub const fn new() -> Running {
        Running {
            h: K0,
            tail: 0,
            n: 0,
        }
    }

    pub fn feed(&mut self, mut bytes: &[u8]) {
        while self.n != 0 && !bytes.is_empty() {
            self.push(bytes[0]);
            bytes = &bytes[1..];
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            self.h = mum(self.h ^ w, K1);
        }
        for &b in words.remainder() {
            self.push(b);
        }
    }

    fn push(&mut self, b: u8) {
        self.tail |= (b as u64) << (8 * self.n);
        self.n += 1;
        if self.n == 8 {
            self.h = mum(self.h ^ self.tail, K1);
            self.tail = 0;
            self.n = 0;
        }
    }

    /// The hash of everything fed so far (feeding may go on).
    pub fn get(&self) -> u64 {
        mum(self.h ^ self.tail, K0 ^ u64::from(self.n))
    }
}

/// The text with each marker's session named without its step's tag (`session=3f9a1c-s0`
/// reads `session=s0`): every step tags its sessions afresh, yet the same session of the
/// same seed must get the same answers, run after run and arm after arm.
pub fn untagged(text: &str) -> std::borrow::Cow<'_, str> {
    const KEY: &str = "[[plimsoll session=";
    if !text.contains(KEY) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        let (head, tail) = rest.split_at(at + KEY.len());
        out.push_str(head);
        let name = tail.split_whitespace().next().unwrap_or("");
        let bare = name.rsplit_once('-').map(|(_, n)| n).filter(|n| {
            n.len() > 1 && n.starts_with('s') && n[1..].bytes().all(|b| b.is_ascii_digit())
        });
        let skip = bare.map_or(0, |n| name.len() - n.len());
        rest = &tail[skip..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Hash of what the conversation says, not how it was sent: the same conversation
/// gets the same answer whether streamed or not, and whatever the JSON key order.
pub fn content_hash(seed: u64, req: &wire::Request) -> u64 {
    let mut h = fnv1a(seed, req.model.as_bytes());
    let mut feed = |bytes: &[u8]| {
        h = fnv1a(h, bytes);
    };
    feed(req.system.as_bytes());
    for m in &req.messages {
        feed(format!("{:?}", m.role).as_bytes());
        feed(untagged(&m.text).as_bytes());
        feed(m.tool_call_id.as_deref().unwrap_or("").as_bytes());
        for c in &m.tool_calls {
            feed(c.id.as_bytes());
            feed(c.name.as_bytes());
            feed(c.arguments.as_bytes());
        }
    }
    for t in &req.tools {
        feed(t.name.as_bytes());
    }
    feed(format!("{:?}{:?}", req.tool_choice, req.max_output_tokens).as_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_hash_is_the_same_however_its_bytes_are_cut() {
        let text = b"The quick brown fox jumps over the lazy dog, twice: 0123456789";
        let mut whole = Running::new();
        whole.feed(text);
        for cut in [0, 1, 7, 8, 9, 15, 16, 33, text.len()] {
            let mut two = Running::new();
            two.feed(&text[..cut]);
            let part = two.get();
            two.feed(&text[cut..]);
            assert_eq!(two.get(), whole.get(), "cut at {cut}");
            let mut head = Running::new();
            head.feed(&text[..cut]);
            assert_eq!(part, head.get());
        }
        // A byte changed, dropped or added (a zero too) changes it.
        let mut seen = std::collections::HashSet::new();
        for t in [
            &text[..],
            &text[..40],
            &text[1..],
            b"The quick",
            b"The quick\0",
            b"",
        ] {
            let mut r = Running::new();
            r.feed(t);
            assert!(seen.insert(r.get()), "{t:?}");
        }
    }

    #[test]
    fn a_step_s_tag_does_not_change_what_a_session_says() {
        let a = "[[plimsoll session=3f9a1c-s12 nonce=psn1 turn=2]] hi";
        assert_eq!(untagged(a), "[[plimsoll session=s12 nonce=psn1 turn=2]] hi");
        assert_eq!(
            untagged("[[plimsoll session=s3 nonce=x turn=1]]"),
            "[[plimsoll session=s3 nonce=x turn=1]]"
        );
        assert_eq!(
            untagged("[[plimsoll session=r0000abcd-s7 n]] and [[plimsoll session=ab-s1 m]]"),
            "[[plimsoll session=s7 n]] and [[plimsoll session=s1 m]]"
        );
        assert_eq!(
            untagged("[[plimsoll session=my-own x]]"),
            "[[plimsoll session=my-own x]]"
        );
        assert_eq!(untagged("no marker"), "no marker");
    }
}
