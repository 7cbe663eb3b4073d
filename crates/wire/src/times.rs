//! Times as the providers write them in headers: RFC 3339 timestamps (Anthropic's
//! rate-limit resets) and Go durations (OpenAI's). The clock itself is the caller's:
//! this module only formats the numbers it is given.

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time in milliseconds (UTC, civil calendar).
pub fn rfc3339(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// 1500 → "1.5s", 360000 → "6m0s", 20 → "20ms": OpenAI's reset format.
pub fn go_duration(ms: u64) -> String {
    if ms == 0 {
        "0s".into()
    } else if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        let s = format!("{:.3}", ms as f64 / 1000.0);
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_utc_times() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_374_341_000), "2026-11-22T19:05:41Z");
        assert_eq!(super::rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
    }
}
