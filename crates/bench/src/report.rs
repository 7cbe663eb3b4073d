//! Printing benchmark figures: a table with the machine's fingerprint, each run and
//! the median, or JSON.

use crate::mock_bench::{run_mock_bench, MockBenchOptions, MockBenchResult};
use anyhow::Context;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

type Row = (&'static str, fn(&MockBenchResult) -> f64, &'static str);

const ROWS: &[Row] = &[
    ("TTFT error p50", |r| r.ttft_err_p50_ms, "ms"),
    ("TTFT error p99", |r| r.ttft_err_p99_ms, "ms"),
    ("TTFT error max", |r| r.ttft_err_max_ms, "ms"),
    ("interval error p50", |r| r.interval_err_p50_ms, "ms"),
    ("interval error p99", |r| r.interval_err_p99_ms, "ms"),
    ("interval error max", |r| r.interval_err_max_ms, "ms"),
    (
        "mock lateness p99 (server side)",
        |r| r.mock_late_p99_ms,
        "ms",
    ),
    ("chunks/s", |r| r.chunks_per_s, ""),
    ("mock CPU per chunk", |r| r.mock_cpu_us_per_chunk, "µs"),
    ("mock CPU per request", |r| r.mock_cpu_us_per_request, "µs"),
    (
        "  of which user (mock code)",
        |r| r.mock_user_us_per_chunk,
        "µs",
    ),
    (
        "  of which kernel (TCP send)",
        |r| r.mock_sys_us_per_chunk,
        "µs",
    ),
    ("mock CPU", |r| r.mock_cpu_cores, "cores"),
    (
        "mock RSS per open stream",
        |r| r.mock_rss_kb_per_stream,
        "KB",
    ),
    ("mock RSS idle → peak", |r| r.mock_peak_rss_mb, "MB"),
    ("requests completed", |r| r.requests_ok as f64, ""),
    ("requests failed", |r| r.requests_failed as f64, ""),
];

pub fn print_mock_bench(opts: &MockBenchOptions, json: bool) -> anyhow::Result<()> {
    let nofile = crate::raise_nofile_limit();
    if (nofile as usize) < opts.streams + 64 {
        anyhow::bail!(
            "--streams {} needs that many sockets but the open-files limit is {nofile}; raise it (ulimit -n) or lower --streams",
            opts.streams
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let runs = rt.block_on(run_mock_bench(opts))?;
    if json {
        println!(
            "{}",
            serde_json::json!({"machine": crate::fingerprint(), "streams": opts.streams,
                "ttft_ms": opts.ttft_ms, "tok_ms": opts.tok_ms, "tokens": opts.tokens,
                "tokens_per_chunk": opts.tokens_per_chunk, "api": opts.api,
                "prompt_tokens": opts.prompt_tokens, "cache": opts.cache, "runs": runs})
        );
        return Ok(());
    }
    println!("plimsoll bench mock — {}", crate::fingerprint());
    println!(
        "{} streams, api {}, ttft {} ms, {} tokens at {} ms, {} token(s)/chunk; {:.0} s warm-up + {:.0} s window × {}",
        opts.streams,
        opts.api,
        opts.ttft_ms,
        opts.tokens,
        opts.tok_ms,
        opts.tokens_per_chunk,
        opts.warmup.as_secs_f64(),
        opts.window.as_secs_f64(),
        runs.len()
    );
    if opts.prompt_tokens > 0 || !opts.cache {
        println!(
            "a {}-token system prompt shared by every request; the mock's prompt cache {}",
            opts.prompt_tokens,
            if opts.cache { "on" } else { "off" }
        );
    }
    print!("{:<34}", "");
    for i in 0..runs.len() {
        print!("{:>12}", format!("run {}", i + 1));
    }
    println!("{:>12}", "median");
    for (name, get, unit) in ROWS {
        print!("{:<34}", format!("{name} ({unit})").replace(" ()", ""));
        for r in &runs {
            print!("{:>12}", fmt(get(r)));
        }
        println!("{:>12}", fmt(median(runs.iter().map(get).collect())));
    }
    let idle = median(runs.iter().map(|r| r.mock_idle_rss_mb).collect());
    println!("(mock idle RSS {idle:.1} MB; interval error compares each gap between delta events with its nominal gap; \
              a coalesced write shows as a gap of 0)");
    Ok(())
}

fn fmt(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}
