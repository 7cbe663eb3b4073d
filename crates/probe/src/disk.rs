//! The SUT's scratch directory while a step runs: how many bytes and files it holds at
//! its highest, and how little room its filesystem had left (bytes and inodes), so a
//! full disk or exhausted inodes can be named as what stopped the SUT.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Entries walked at most per sample (a SUT writing millions of files is counted as
/// "at least this many", not walked for seconds).
const WALK_LIMIT: u64 = 200_000;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskSummary {
    pub peak_bytes: u64,
    pub peak_files: u64,
    /// The least free space and free inodes its filesystem had (for unprivileged users).
    pub free_min_bytes: Option<u64>,
    pub free_min_inodes: Option<u64>,
    pub fs_bytes: Option<u64>,
    pub fs_inodes: Option<u64>,
}

/// Bytes and entries under `dir` (not following links), up to `WALK_LIMIT` entries.
pub fn usage(dir: &Path) -> (u64, u64) {
    let (mut bytes, mut files) = (0u64, 0u64);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            files += 1;
            if files >= WALK_LIMIT {
                return (bytes, files);
            }
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                bytes += m.len();
            }
        }
    }
    (bytes, files)
}

/// (free bytes, free inodes, size in bytes, inodes) of the filesystem holding `path`.
pub fn room(path: &Path) -> Option<(u64, u64, u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the struct we own; the path is a valid C string.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let f = s.f_frsize as u64;
    Some((
        s.f_bavail as u64 * f,
        s.f_favail as u64,
        s.f_blocks as u64 * f,
        s.f_files as u64,
    ))
}

impl DiskSummary {
    fn add(&mut self, (bytes, files): (u64, u64), room: Option<(u64, u64, u64, u64)>) {
        self.peak_bytes = self.peak_bytes.max(bytes);
        self.peak_files = self.peak_files.max(files);
        if let Some((fb, fi, tb, ti)) = room {
            self.free_min_bytes = Some(self.free_min_bytes.map_or(fb, |m| m.min(fb)));
            self.free_min_inodes = Some(self.free_min_inodes.map_or(fi, |m| m.min(fi)));
            self.fs_bytes = Some(tb);
            self.fs_inodes = Some(ti);
        }
    }

    /// Whether its filesystem ran out of space (a few blocks are as good as none).
    pub fn full(&self) -> bool {
        self.free_min_bytes.is_some_and(|b| b < 64 * 1024)
    }

    /// Whether its filesystem ran out of inodes (of those the filesystem limits).
    pub fn out_of_inodes(&self) -> bool {
        self.fs_inodes.is_some_and(|t| t > 0) && self.free_min_inodes == Some(0)
    }
}

/// Watches a scratch directory on a background thread until finished.
pub struct DiskWatch {
    stop: Arc<AtomicBool>,
    summary: Arc<Mutex<DiskSummary>>,
    thread: Option<std::thread::JoinHandle<()>>,
    dir: PathBuf,
}

impl DiskWatch {
    pub fn start(dir: &Path, every: Duration) -> DiskWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let summary = Arc::new(Mutex::new(DiskSummary::default()));
        let (s, sum, d) = (stop.clone(), summary.clone(), dir.to_path_buf());
        let watching = move || {
            while !s.load(Relaxed) {
                let seen = (usage(&d), room(&d));
                sum.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .add(seen.0, seen.1);
                let until = std::time::Instant::now() + every;
                while !s.load(Relaxed) && std::time::Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        };
        // Named as the probe's, so a step counts its CPU there.
        let thread = std::thread::Builder::new()
            .name(format!("{}-disk", crate::own::THREAD_NAME))
            .spawn(watching)
            .expect("spawning the disk watch thread");
        DiskWatch {
            stop,
            summary,
            thread: Some(thread),
            dir: dir.to_path_buf(),
        }
    }

    /// Stops watching, with one last look (before the SUT's directory is removed).
    pub fn finish(mut self) -> DiskSummary {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let mut s = self
            .summary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        s.add(usage(&self.dir), room(&self.dir));
        s
    }
}

impl Drop for DiskWatch {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_bytes_and_files_and_sees_the_room_left() {
        let d = std::env::temp_dir().join(format!("plimsoll-disk-test-{}", std::process::id()));
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("a"), vec![0u8; 1000]).unwrap();
        std::fs::write(d.join("sub/b"), vec![0u8; 24]).unwrap();
        assert_eq!(usage(&d), (1024, 3), "a, sub, sub/b");
        let w = DiskWatch::start(&d, Duration::from_millis(10));
        std::thread::sleep(Duration::from_millis(50));
        let s = w.finish();
        assert_eq!((s.peak_bytes, s.peak_files), (1024, 3));
        assert!(s.free_min_bytes.is_some() && !s.full(), "{s:?}");
        let _ = std::fs::remove_dir_all(&d);
        let tiny = DiskSummary {
            free_min_bytes: Some(4096),
            free_min_inodes: Some(0),
            fs_inodes: Some(64),
            ..Default::default()
        };
        assert!(tiny.full() && tiny.out_of_inodes());
        let no_limit = DiskSummary {
            free_min_inodes: Some(0),
            fs_inodes: Some(0),
            ..Default::default()
        };
        assert!(
            !no_limit.out_of_inodes(),
            "filesystems without an inode limit report 0 of 0"
        );
    }
}
