//! Placeholders in session templates: `{{name}}` filled from the session's values, with
//! an unset name an error rather than an empty string, and the generated ids
//! (`{{nonce}}`, `{{uuid}}`, `{{request_uuid}}`) as fixed functions of the seed, so a run
//! can be replayed.

/// The names of the placeholders in a template, in order.
pub fn placeholders(t: &str) -> impl Iterator<Item = &str> {
    t.split("{{")
        .skip(1)
        .filter_map(|r| r.split_once("}}").map(|(n, _)| n.trim()))
}

/// Fills `{{name}}` from `vars`; a name without a value renders empty (use [`fill`] when
/// that would be a mistake).
pub fn render(t: &str, vars: &[(&str, &str)]) -> String {
    fill_with(t, |name| {
        Some(
            vars.iter()
                .find(|(k, _)| *k == name)
                .map_or("", |(_, v)| *v),
        )
    })
    .unwrap_or_default()
}

/// Fills `{{name}}` from `vars`, or names the first placeholder that has no value.
pub fn fill(t: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    fill_with(t, |name| {
        vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
    })
}

fn fill_with<'v>(t: &str, value: impl Fn(&str) -> Option<&'v str>) -> Result<String, String> {
    let mut out = String::with_capacity(t.len() + 32);
    let mut rest = t;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let Some((name, after)) = rest[i + 2..].split_once("}}") else {
            out.push_str(&rest[i..]);
            return Ok(out);
        };
        match (value(name.trim()), pad_len(name.trim())) {
            (Some(v), _) => out.push_str(v),
            (None, Some(n)) => out.extend(std::iter::repeat_n('x', n)),
            (None, None) => return Err(name.trim().to_string()),
        }
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// `livekit.port` → `livekit`: the port of a `[[service]]` the step started, a value
/// the step gives every session (`DriveOptions::services`).
pub fn service_port(placeholder: &str) -> Option<&str> {
    placeholder.strip_suffix(".port").filter(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// `pad 100` → 100: `{{pad N}}` is N bytes of filler (a body of a chosen size), at most
/// 64 MiB.
pub fn pad_len(placeholder: &str) -> Option<usize> {
    placeholder
        .strip_prefix("pad")
        .filter(|n| n.starts_with(' '))
        .and_then(|n| n.trim().parse().ok())
        .filter(|n| *n <= 64 << 20)
}

/// Every `{{pad N}}` in `t` with N = `n`.
pub fn with_pad(t: &str, n: u64) -> String {
    let mut out = String::new();
    let mut rest = t;
    while let Some(i) = rest.find("{{") {
        let Some(j) = rest[i..].find("}}") else { break };
        out.push_str(&rest[..i]);
        if pad_len(rest[i + 2..i + j].trim()).is_some() {
            out.push_str(&format!("{{{{pad {n}}}}}"));
        } else {
            out.push_str(&rest[i..i + j + 2]);
        }
        rest = &rest[i + j + 2..];
    }
    out.push_str(rest);
    out
}

/// SplitMix64: a fixed, well-mixed function of its input.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The nonce of session `i` under `seed`: `psn` + 16 hex digits.
/// A stable 64-bit hash of a text (FNV-1a), for ids and spreads derived from names.
pub fn seed_of(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

pub fn nonce(seed: u64, i: usize) -> String {
    format!(
        "psn{:016x}",
        mix(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED)
    )
}

/// A version-4 UUID made from `(seed, a, b)`: the same inputs, the same id.
pub fn uuid(seed: u64, a: u64, b: u64) -> String {
    let hi = mix(seed ^ mix(a ^ 0x0055_5549_4400));
    let lo = mix(hi ^ mix(b ^ 0x00AA_7569_6400));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&hi.to_be_bytes());
    bytes[8..].copy_from_slice(&lo.to_be_bytes());
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_well_formed_stable_and_distinct() {
        let u = uuid(7, 3, 0);
        assert_eq!(u, uuid(7, 3, 0));
        assert_ne!(u, uuid(7, 4, 0));
        assert_ne!(u, uuid(8, 3, 0));
        assert_ne!(u, uuid(7, 3, 1));
        // 8-4-4-4-12 hex, version 4, RFC 4122 variant: what Python's uuid.UUID accepts.
        let parts: Vec<&str> = u.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(u.chars().all(|c| c == '-' || c.is_ascii_hexdigit()));
        assert!(parts[2].starts_with('4'), "{u}");
        assert!("89ab".contains(&parts[3][..1]), "{u}");
    }

    #[test]
    fn an_unset_name_is_named_not_emptied() {
        let vars = [("a", "1")];
        assert_eq!(fill("x{{a}}y{{ a }}", &vars).unwrap(), "x1y1");
        assert_eq!(fill("{{a}}/{{thread}}", &vars).unwrap_err(), "thread");
        assert_eq!(render("{{a}}/{{thread}}", &vars), "1/");
        assert_eq!(fill("open {{ brace", &vars).unwrap(), "open {{ brace");
    }

    #[test]
    fn nonces_are_stable_and_distinct() {
        assert_eq!(nonce(1, 2), nonce(1, 2));
        assert_ne!(nonce(1, 2), nonce(1, 3));
        assert_ne!(nonce(1, 2), nonce(2, 2));
        assert_eq!(nonce(1, 2).len(), 19);
    }
}
