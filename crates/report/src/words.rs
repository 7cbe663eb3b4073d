//! Counts with their nouns in agreement: `1 connection`, `2 connections`, `1 process`,
//! `2 processes` — for every line that puts a number before a noun. What the lines say
//! is each renderer's business.

/// `n noun`, the noun plural unless n is 1.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {}", noun_for(n, noun))
}

/// The noun as it goes after `n`.
pub fn noun_for(n: u64, noun: &str) -> String {
    if n == 1 {
        return noun.to_string();
    }
    plural(noun)
}

/// The English plural of the nouns Plimsoll counts.
pub fn plural(noun: &str) -> String {
    let consonant_y = noun.ends_with('y')
        && !noun.ends_with("ay")
        && !noun.ends_with("ey")
        && !noun.ends_with("oy");
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if ["s", "x", "ch", "sh"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nouns_agree_with_one_and_two() {
        assert_eq!(count(1u64, "connection"), "1 connection");
        assert_eq!(count(2u64, "connection"), "2 connections");
        assert_eq!(count(2u64, "process"), "2 processes");
        assert_eq!(count(2u64, "replica"), "2 replicas");
        assert_eq!(count(2u64, "dependency"), "2 dependencies");
        assert_eq!(count(0u64, "time"), "0 times");
    }
}
