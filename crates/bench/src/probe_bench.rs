//! `plimsoll bench probe`: what one sample of a SUT's process tree costs when the SUT
//! has many threads. A child process of this executable holds N idle OS threads (and, to
//! time reading PSS, memory its forked children share, as a worker's job processes do);
//! the probe samples it repeatedly and the table shows the time per sample.

use anyhow::Context;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the held child holds.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    pub threads: usize,
    pub connections: usize,
    /// MB the child writes before it forks: every fork shares them.
    pub memory_mb: usize,
    /// Children forked, each sleeping on the pages it shares.
    pub forks: usize,
}

/// Runs in the child: writes `memory_mb` MB, forks `forks` children that share them, then
/// holds `threads` sleeping OS threads and `connections` loopback TCP connections to
/// itself (as many as its descriptor limit allows) until killed (with its process group).
pub fn hold_threads(h: Held) -> ! {
    let memory = vec![1u8; h.memory_mb << 20];
    std::mem::forget(memory);
    for _ in 0..h.forks {
        // SAFETY: the forked child only sleeps: it takes no lock and allocates nothing.
        if unsafe { libc::fork() } == 0 {
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
    }
    let (threads, connections) = (h.threads, h.connections);
    let mut held = Vec::new();
    if let Ok(l) = std::net::TcpListener::bind("127.0.0.1:0") {
        let addr = l.local_addr().ok();
        for _ in 0..connections {
            let Some(Ok(out)) = addr.map(std::net::TcpStream::connect) else {
                break;
            };
            let Ok((inb, _)) = l.accept() else { break };
            held.push((out, inb));
        }
        held.shrink_to_fit();
        std::mem::forget(l);
    }
    std::mem::forget(held);
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

/// What the benchmark timed.
struct Timed {
    seen: u64,
    times: Vec<Duration>,
    full_cost: Duration,
    net_times: Vec<Duration>,
    held: probe::net::Connections,
    thread_times: Vec<Duration>,
    pss_times: Vec<Duration>,
    processes: usize,
    pss_kb: u64,
}

/// Starts the child holding what `h` says (killed with its forks when dropped, or by the
/// watchdog should the bench be killed).
fn hold(exe: &std::path::Path, h: Held) -> anyhow::Result<guard::Owned> {
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "hold-threads", "--threads", &h.threads.to_string()])
        .args(["--connections", &h.connections.to_string()])
        .args(["--memory-mb", &h.memory_mb.to_string()])
        .args(["--forks", &h.forks.to_string()])
        .stdout(Stdio::piped());
    let mut child = guard::Owned::spawn(&mut cmd).context("starting the thread-holding child")?;
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.take_stdout().context("child stdout")?),
        &mut line,
    )?;
    Ok(child)
}

/// Times what the sampler does to a process: cheap figures every sample, the full set
/// every 4th, the connections, every thread's schedstat.
fn time(pid: u32, samples: usize) -> Timed {
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
    let mut net_times = Vec::new();
    let mut held = probe::net::Connections::default();
    for _ in 0..21 {
        let t = Instant::now();
        held = probe::net::connections(&pids);
        net_times.push(t.elapsed());
    }
    let mut thread_times = Vec::new();
    for _ in 0..11 {
        let t = Instant::now();
        std::hint::black_box(probe::threads::read_all(&pids));
        thread_times.push(t.elapsed());
    }
    let mut pss_times = Vec::new();
    let mut pss_kb = 0;
    for _ in 0..11 {
        let t = Instant::now();
        pss_kb = probe::pss::tree_pss_kb(&pids).unwrap_or_default();
        pss_times.push(t.elapsed());
    }
    times.sort();
    net_times.sort();
    thread_times.sort();
    pss_times.sort();
    Timed {
        pss_times,
        processes: pids.len(),
        pss_kb,
        seen,
        times,
        full_cost,
        net_times,
        held,
        thread_times,
    }
}

pub fn run_probe_bench(exe: &std::path::Path, h: Held, samples: usize) -> anyhow::Result<()> {
    if h.threads > MAX_THREADS {
        anyhow::bail!("--threads {}: this benchmark holds at most {MAX_THREADS} threads (vm.max_map_count allows about that many)", h.threads);
    }
    let child = hold(exe, h)?;
    let t = time(child.pid(), samples);
    drop(child);
    print(&t, samples);
    Ok(())
}

fn print(t: &Timed, samples: usize) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let times = &t.times;
    let median = us(times[times.len() / 2]);
    let p99 = us(times[(times.len() * 99 / 100).min(times.len() - 1)]);
    println!("plimsoll bench probe — {}", crate::fingerprint());
    println!(
        "SUT with {} OS threads, {samples} samples (every 4th also counts fds)",
        t.seen
    );
    println!(
        "time per sample: median {median:.0} µs, p99 {p99:.0} µs, max {:.0} µs",
        us(*times.last().unwrap())
    );
    let mean = times.iter().map(|d| us(*d)).sum::<f64>() / times.len() as f64;
    println!(
        "(one full sample — process list, CPU summed over threads, descriptors: {:.0} µs)",
        us(t.full_cost)
    );
    println!("at the default 50 ms interval the probe costs {:.2} % of one core (mean {mean:.0} µs per sample)", mean / 50_000.0 * 100.0);
    let out: u32 = t.held.by_port.values().sum();
    let net = us(t.net_times[t.net_times.len() / 2]);
    let inverse = f64::from(probe::sampler::NET_SHARE_INVERSE);
    println!(
        "connections by remote port ({out} out, {} accepted): median {net:.0} µs a count (the sampler counts them at most {:.1} % of the time: every {:.0} ms at this cost)",
        t.held.inbound,
        100.0 / inverse,
        (net * inverse / 1000.0).max(200.0)
    );
    let read = us(t.thread_times[t.thread_times.len() / 2]);
    let every_ms = (read / 1000.0 / probe::threads::COST_SHARE).max(200.0);
    println!(
        "per-thread CPU (every thread's schedstat): median {read:.0} µs a read; paced to {:.0} % of a core, one read every {every_ms:.0} ms",
        probe::threads::COST_SHARE * 100.0
    );
    let pss = us(t.pss_times[t.pss_times.len() / 2]);
    let pss_every_ms = (pss * f64::from(probe::pss::PSS_SHARE_INVERSE) / 1000.0)
        .max(probe::pss::PSS_EVERY.as_secs_f64() * 1000.0);
    println!(
        "PSS (each process's smaps_rollup: {} processes, {:.0} MB by PSS): median {pss:.0} µs a read; paced to {:.1} % of a core, one read every {pss_every_ms:.0} ms",
        t.processes,
        t.pss_kb as f64 / 1024.0,
        100.0 / f64::from(probe::pss::PSS_SHARE_INVERSE)
    );
    println!(
        "samples and threads together: {:.2} % of one core ({:.2} % + {:.2} %); counting connections adds at most {:.1} %",
        mean / 50_000.0 * 100.0 + read / 1000.0 / every_ms * 100.0,
        mean / 50_000.0 * 100.0,
        read / 1000.0 / every_ms * 100.0,
        100.0 / inverse
    );
}
