//! `plimsoll bench calls` on the terminal: the header, a row as each call count finishes
//! (under a row that did not keep time, which part filled first), and what the rows say —
//! or a line of JSON at the end.

use crate::report::{runtime, sockets_for};

/// `plimsoll bench calls`: the table, a row as each call count finishes (or JSON at the
/// end), and the most calls that kept time, per harness core and in total.
pub fn print_calls_bench(opts: &crate::CallsBenchOptions, json: bool) -> anyhow::Result<()> {
    let most = opts.calls.iter().copied().max().unwrap_or(0);
    sockets_for("--calls", most, 2, "the count")?;
    let rt = runtime()?;
    if !json {
        calls_header(opts);
    }
    let mut print = |r: &crate::CallsBenchRow| {
        if !json {
            calls_row(r);
        }
    };
    let rows = rt.block_on(crate::run_calls_bench(opts, &mut print))?;
    let held = rows.iter().filter(|r| r.kept_time).max_by_key(|r| r.calls);
    if json {
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(), "transport": opts.transport, "turns": opts.turns,
            "bot_core": opts.bot_core, "harness_cores": opts.harness_cores, "rows": rows,
            "most_calls_in_real_time": held.map(|r| r.calls),
            "calls_per_harness_core": held.map(|r| r.calls_per_harness_core)})
        );
        return Ok(());
    }
    println!("(late: how late the harness sent its frames against their 20 ms deadlines; kept time: late p99 ≤ 5 ms with the harness below 95 % of its {}, the bot's core not full and no call failed; calls/core: calls over the harness's cores busy; replies: utterances read back from the bot's audio)", count_cores(opts.harness_cores));
    match held {
        Some(r) => println!(
            "this process drives {} calls in real time here on {} (the most of these rows), {:.0} calls per harness core busy; a step's mock adds its speech and transcription to those cores: see plimsoll bench mock --audio",
            r.calls,
            count_cores(opts.harness_cores),
            r.calls_per_harness_core
        ),
        None => println!("no row kept time: fewer calls, or a quieter machine"),
    }
    Ok(())
}

fn count_cores(n: usize) -> String {
    match n {
        1 => "1 core".into(),
        n => format!("{n} cores"),
    }
}

fn calls_header(opts: &crate::CallsBenchOptions) {
    println!("plimsoll bench calls — {}", crate::fingerprint());
    let turns = match opts.turns {
        1 => "1 turn".to_string(),
        n => format!("{n} turns"),
    };
    let cores = match (opts.apart, opts.harness_cores) {
        (true, _) => format!(
            "the harness on {} (every core but {}), the bot on core {}",
            count_cores(opts.harness_cores),
            opts.bot_core,
            opts.bot_core
        ),
        (false, 1) => format!(
            "the harness and the bot share core {} (one core here): calls per core counts both",
            opts.bot_core
        ),
        (false, n) => format!(
            "the harness and the bot share {} (the harness could not be pinned apart): calls per core counts both",
            count_cores(n)
        ),
    };
    let calls = match opts.transport {
        crate::Transport::Twilio => "Twilio calls",
        crate::Transport::WebRtc => "WebRTC calls",
    };
    let frames = match opts.transport {
        crate::Transport::Twilio => "20 ms µ-law frames, each reply played and decoded",
        crate::Transport::WebRtc => {
            "20 ms Opus frames over DTLS-SRTP, each reply decoded, played through the jitter buffer and read"
        }
    };
    println!("{calls} of {turns}, {frames}; {cores}");
    println!(
        "{:>6}{:>10}{:>10}{:>14}{:>18}{:>11}{:>12}{:>9}{:>8}{:>8}  kept time",
        "calls",
        "frames/s",
        "late p99",
        "harness cores",
        "ms per call-sec",
        "calls/core",
        "resp p50",
        "replies",
        "turns",
        "failed"
    );
}

fn calls_row(r: &crate::CallsBenchRow) {
    println!(
        "{:>6}{:>10.0}{:>10.2}{:>14.2}{:>18.2}{:>11.0}{:>12}{:>9}{:>8}{:>8}  {}",
        r.calls,
        r.frames_per_s,
        r.late_p99_ms,
        r.harness_cpu_cores,
        r.harness_cpu_ms_per_call_s,
        r.calls_per_harness_core,
        r.response_p50_ms.map_or("—".into(), |v| format!("{v:.0}")),
        r.replies_read,
        r.turns,
        r.calls_failed,
        if r.kept_time { "yes" } else { "no" }
    );
    if let Some(why) = &r.filled_first {
        println!("        {} calls: {why}", r.calls);
    }
}
