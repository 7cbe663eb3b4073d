//! Where a `bench calls` row's CPU went: the bot's thread, the harness's threads off the
//! clock (the driver's voice pool and Opus lanes, named `plimsoll-drive…`: speaking,
//! hearing, decoding) and on it (the async threads: frames, RTP and SRTP, WebSockets,
//! playback) — and which of them filled first when a row did not keep time.

/// CPU seconds of the threads on the clock so far: every living thread but the driver's
/// pools and lanes (`plimsoll-drive…`) and the bot's (`bot`, its name). They live as long
/// as the bench, so a row's share is exact; the pools' threads end with each row, and are
/// the rest of the harness's CPU.
pub(crate) fn on_clock_secs(bot: &str) -> f64 {
    probe::own::threads_cpu_ns()
        .into_iter()
        .filter(|(name, _)| !name.starts_with(drive::THREAD_NAME) && name != bot)
        .map(|(_, ns)| ns as f64 / 1e9)
        .sum()
}

/// What a row's CPU was, in cores over its seconds.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Split {
    /// The harness's async threads: frames on their deadlines, RTP/SRTP, playback.
    pub on_clock_cores: f64,
    /// The harness's voice pool and Opus lanes: speaking, hearing, decoding.
    pub off_clock_cores: f64,
    /// The bot's thread (it has a core of its own, or shares the harness's).
    pub bot_cores: f64,
}

/// The harness's share of its cores that counts as full once frames went late or calls
/// failed.
const NEARLY_FULL: f64 = 0.85;

/// Which part filled first in a row that did not keep time, in words; None when it kept
/// time. `cores`: the harness's; `late_p99_ms` its frames'; `failed`: the first failure.
pub(crate) fn filled_first(
    s: &Split,
    cores: usize,
    late_p99_ms: f64,
    failed: Option<&str>,
) -> Option<String> {
    let harness = s.on_clock_cores + s.off_clock_cores;
    let full = 0.95 * cores.max(1) as f64;
    let parts = format!(
        "on the clock {:.2} cores (sending frames, reading the line, playback), off it {:.2} (speaking, hearing, decoding), the bot {:.0} % of its core",
        s.on_clock_cores,
        s.off_clock_cores,
        s.bot_cores * 100.0
    );
    if s.bot_cores >= 0.95 {
        return Some(format!(
            "the bot's core filled first: the bench's own bot, not the harness; {parts}"
        ));
    }
    let went_wrong = late_p99_ms > 5.0 || failed.is_some();
    // Nearly full is full where frames went late or calls failed: a core the scheduler
    // hands out in slices is out of room before the count reads 100 %.
    if harness >= full || (went_wrong && harness >= NEARLY_FULL * cores.max(1) as f64) {
        let which = match s.on_clock_cores >= s.off_clock_cores {
            true => "the threads that keep time",
            false => "the voice's threads",
        };
        return Some(format!(
            "the harness's {} filled first ({:.0} % busy), most of it {which}: {parts}",
            match cores {
                1 => "core".to_string(),
                n => format!("{n} cores"),
            },
            harness * 100.0 / cores.max(1) as f64
        ));
    }
    if late_p99_ms > 5.0 {
        return Some(format!(
            "frames went late ({late_p99_ms:.1} ms at p99) with the cores not full: the threads that keep time waited for a core; {parts}"
        ));
    }
    failed.map(|f| format!("calls failed with the cores not full ({f}); {parts}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_part_that_filled_first_is_named() {
        let s = |on, off, bot| Split {
            on_clock_cores: on,
            off_clock_cores: off,
            bot_cores: bot,
        };
        assert_eq!(filled_first(&s(0.5, 0.3, 0.4), 1, 2.0, None), None);
        let bot = filled_first(&s(0.5, 0.3, 0.99), 1, 9.0, None).unwrap();
        assert!(bot.starts_with("the bot's core filled first"), "{bot}");
        assert!(bot.ends_with("the bot 99 % of its core"), "{bot}");
        let clock = filled_first(&s(0.6, 0.37, 0.4), 1, 9.0, None).unwrap();
        assert!(
            clock.starts_with("the harness's core filled first (97 % busy), most of it the threads that keep time"),
            "{clock}"
        );
        // 90 % busy and frames late: the core is what ran out, not the scheduler.
        let nearly = filled_first(&s(0.54, 0.36, 0.3), 1, 6.3, Some("timeout: …")).unwrap();
        assert!(
            nearly.starts_with("the harness's core filled first (90 % busy)"),
            "{nearly}"
        );
        let voice = filled_first(&s(0.8, 1.2, 0.4), 2, 3.0, None).unwrap();
        assert!(
            voice.contains("2 cores filled first (100 % busy), most of it the voice's threads"),
            "{voice}"
        );
        let late = filled_first(&s(0.5, 0.3, 0.4), 1, 7.5, None).unwrap();
        assert!(
            late.starts_with("frames went late (7.5 ms at p99)"),
            "{late}"
        );
        let failed = filled_first(&s(0.5, 0.3, 0.4), 1, 2.0, Some("timeout: no reply")).unwrap();
        assert!(failed.contains("not full (timeout: no reply)"), "{failed}");
    }
}
