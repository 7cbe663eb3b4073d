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
        feed(m.text.as_bytes());
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
