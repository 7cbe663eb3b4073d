//! `plimsoll bench probe`: what one sample of a SUT's process tree costs when the SUT
//! has many threads. A child process of this executable holds N idle OS threads; the
//! probe samples it repeatedly and the table shows the time per sample.

use anyhow::Context;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs in the child: holds `threads` sleeping OS threads until killed.
pub fn hold_threads(threads: usize) -> ! {
    // Each thread costs about four memory mappings (stack, guard page, signal stack and
    // its guard); the default vm.max_map_count of 65530 runs out near 16,000 threads.
    for _ in 0..threads.min(MAX_THREADS) {
        let _ = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| loop {
                std::thread::sleep(Duration::from_secs(3600));
            });
    }
    println!("ready");
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

const MAX_THREADS: usize = 16_000;

pub fn run_probe_bench(
    exe: &std::path::Path,
    threads: usize,
    samples: usize,
) -> anyhow::Result<()> {
    if threads > MAX_THREADS {
        anyhow::bail!("--threads {threads}: this benchmark holds at most {MAX_THREADS} threads (vm.max_map_count allows about that many)");
    }
    let mut child = Command::new(exe)
        .args(["bench", "hold-threads", "--threads", &threads.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .context("starting the thread-holding child")?;
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().context("child stdout")?),
        &mut line,
    )?;
    let pid = child.id();
    // What the sampler does: cheap figures every sample, the full set every 4th.
    let mut times = Vec::with_capacity(samples);
    let mut seen = 0;
    let mut pids = probe::tree::tree_pids(pid);
    for i in 0..samples {
        let t = Instant::now();
        let full = i % 4 == 0;
        if full {
            pids = probe::tree::tree_pids(pid);
        }
        let s = probe::tree::sample_pids(&pids, full, full);
        times.push(t.elapsed());
        seen = s.threads;
    }
    let t = Instant::now();
    let _ = probe::sample_tree(pid, true);
    let full_cost = t.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    times.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let median = us(times[times.len() / 2]);
    let p99 = us(times[(times.len() * 99 / 100).min(times.len() - 1)]);
    println!("plimsoll bench probe — {}", crate::fingerprint());
    println!("SUT with {seen} OS threads, {samples} samples (every 4th also counts fds)");
    println!(
        "time per sample: median {median:.0} µs, p99 {p99:.0} µs, max {:.0} µs",
        us(*times.last().unwrap())
    );
    let mean = times.iter().map(|d| us(*d)).sum::<f64>() / times.len() as f64;
    println!(
        "(one full sample — process list, CPU summed over threads, descriptors: {:.0} µs)",
        us(full_cost)
    );
    println!("at the default 50 ms interval the probe costs {:.2} % of one core (mean {mean:.0} µs per sample)", mean / 50_000.0 * 100.0);
    Ok(())
}
