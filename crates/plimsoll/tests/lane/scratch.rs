//! The SUT's scratch directory: a SUT that writes a file a turn into $TMPDIR on a small
//! filesystem fails once it is full, and the step names the full disk (or the inodes
//! run out) as the cause. Needs to mount a tmpfs (root, as on this project's machines);
//! elsewhere it is skipped.

use crate::common::*;
use std::process::Command;

/// Answers each turn after writing `SIZE` bytes to a new file in $TMPDIR; 500 when it cannot.
const WRITER: &str = r#"
import http.server, os, json, itertools
n = itertools.count()
size = int(os.environ['SIZE'])
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); self.send_header('content-length', '2'); self.end_headers(); self.wfile.write(b'ok')
    def do_POST(self):
        self.rfile.read(int(self.headers['content-length']))
        try:
            with open(os.path.join(os.environ['TMPDIR'], 'f%d' % next(n)), 'wb') as f:
                f.write(b'x' * size)
            status, body = 200, json.dumps({"reply": "Remembered and recalled fact"}).encode()
        except OSError as e:
            print('ERROR cannot write:', e, flush=True)
            status, body = 500, json.dumps({"error": str(e)}).encode()
        self.send_response(status); self.send_header('content-length', str(len(body))); self.end_headers(); self.wfile.write(body)
http.server.ThreadingHTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()
"#;

/// Runs the writer with Plimsoll's TMPDIR on a tmpfs mounted with `options`.
fn on_small_fs(name: &str, options: &str, size: usize) -> Option<serde_json::Value> {
    let mnt = std::env::temp_dir().join(format!("plimsoll-small-fs-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("cannot mount a tmpfs here (not root?); skipping");
        let _ = std::fs::remove_dir(&mnt);
        return None;
    }
    let cfg = config(
        name,
        &format!("[\"python3\", \"-c\", {WRITER:?}]\nenv = {{ SIZE = \"{size}\" }}"),
        "[step]\nconcurrency = 4\n",
    );
    let out = Command::new(BIN)
        .args(["run", "--config"])
        .arg(&cfg)
        .env("TMPDIR", &mnt)
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(&mnt)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let _ = Command::new("umount").arg(&mnt).status();
    let _ = std::fs::remove_dir(&mnt);
    assert!(left.is_empty(), "the scratch dir is removed: {left:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(3));
    Some(serde_json::from_str(line).unwrap())
}

#[test]
fn a_full_scratch_disk_is_named_as_the_cause() {
    let Some(r) = on_small_fs("space", "size=1m", 300 << 10) else {
        return;
    };
    assert_eq!(r["outcome"], "disk_full", "{r}");
    let s = &r["scratch"];
    assert!(s["peak_mb"].as_f64().unwrap() > 0.5, "{s}");
    assert!(s["fs_free_min_mb"].as_f64().unwrap() < 0.07, "{s}");
    assert!(
        r["log"]["errors"].as_u64().unwrap() > 0,
        "its ERROR lines are counted: {r}"
    );
}

#[test]
fn exhausted_inodes_are_named_as_the_cause() {
    let Some(r) = on_small_fs("inodes", "size=64m,nr_inodes=8", 10) else {
        return;
    };
    assert_eq!(r["outcome"], "disk_full", "{r}");
    assert_eq!(r["scratch"]["fs_free_min_inodes"], 0, "{r}");
    assert!(r["scratch"]["peak_files"].as_u64().unwrap() >= 5, "{r}");
}
