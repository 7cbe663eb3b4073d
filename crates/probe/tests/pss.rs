//! A known answer for memory per session in a forking server (issue 62): a parent loads a
//! 200 MB model, then forks three children that each touch 20 MB of their own, as a
//! LiveKit worker forks its job processes or gunicorn its workers. Each child's RSS counts
//! the model again (about 220 MB a child); its PSS counts its share of it (about 20 MB a
//! child, and the model once across the four).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

const SERVER: &str = r#"
import os, sys, time
model = bytearray(b"\x01") * (200 << 20)   # every page touched
print("loaded", flush=True)
sys.stdin.readline()
for _ in range(3):
    if os.fork() == 0:
        own = bytearray(b"\x02") * (20 << 20)
        os.write(1, b"ready\n")   # one write: the three never interleave
        time.sleep(60)
        os._exit(0)
time.sleep(60)
"#;

/// The server's process group, killed when the test ends, passed or failed.
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

#[test]
fn a_forked_child_costs_its_own_pages_by_pss_and_the_model_again_by_rss() {
    let mut child = Command::new("python3")
        .args(["-c", SERVER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("python3 on PATH");
    let root = child.id();
    let group = Group(root as i32);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "loaded");
    let tree = || probe::tree::tree_pids(root);
    let (rss_before, pss_before) = (
        probe::sample_tree(root, false).rss_kb,
        probe::pss::tree_pss_kb(&tree()).unwrap(),
    );
    child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    for _ in 0..3 {
        line.clear();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready");
    }
    let pids = tree();
    let (rss_after, pss_after) = (
        probe::sample_tree(root, false).rss_kb,
        probe::pss::tree_pss_kb(&pids).unwrap(),
    );
    drop(group);
    let _ = child.wait();

    assert_eq!(pids.len(), 4, "{pids:?}");
    println!(
        "RSS {} → {} KB, PSS {pss_before} → {pss_after} KB",
        rss_before, rss_after
    );
    let rss_per_child = mb(rss_after - rss_before) / 3.0;
    let pss_per_child = mb(pss_after.saturating_sub(pss_before)) / 3.0;
    assert!(
        rss_per_child > 200.0,
        "RSS counts the model again in every child: {rss_per_child:.0} MB a child"
    );
    // 20 MB of its own, plus the few pages an interpreter writes after a fork.
    assert!(
        (18.0..32.0).contains(&pss_per_child),
        "PSS: {pss_per_child:.1} MB a child (RSS {rss_per_child:.0})"
    );
    // The model once: the four processes' PSS is near the parent's alone plus 60 MB.
    assert!(
        mb(pss_after) < mb(pss_before) + 100.0,
        "{pss_before} → {pss_after} KB"
    );
}
