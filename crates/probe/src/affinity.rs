//! Separate cores on a small box: which cores this process may use, pinning a thread
//! (and so every thread and process it starts afterwards) to some of them, and the split
//! of a machine between Plimsoll (mock and driver) and the system under test, so a busy
//! SUT cannot make the harness late and the harness cannot steal the SUT's CPU.

/// The cores this process may run on, in order.
pub fn available() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cores`; threads and processes it starts later inherit it.
/// Safe to call between fork and exec (no allocation).
pub fn pin_current(cores: &[usize]) -> std::io::Result<()> {
    // SAFETY: the set is built on the stack and only read by the kernel.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cores {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Cores as the kernel lists them: `[0, 1, 2, 5]` → `"0-2,5"`.
pub fn list(cores: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cores.len() {
        let mut j = i;
        while j + 1 < cores.len() && cores[j + 1] == cores[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cores[i].to_string()
        } else {
            format!("{}-{}", cores[i], cores[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// Which cores go to Plimsoll and which to the SUT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    pub harness: Vec<usize>,
    pub sut: Vec<usize>,
}

/// Splits `cores`: one core for Plimsoll per eight (at least one), the rest for the SUT.
/// None with fewer than two cores: there is nothing to split.
pub fn split(cores: &[usize]) -> Option<Partition> {
    if cores.len() < 2 {
        return None;
    }
    let h = cores.len().div_ceil(8).max(1);
    Some(Partition {
        harness: cores[..h].to_vec(),
        sut: cores[h..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_splits() {
        assert_eq!(list(&[0, 1, 2, 5]), "0-2,5");
        assert_eq!(list(&[3]), "3");
        assert_eq!(split(&[0]), None);
        let p = split(&[0, 1]).unwrap();
        assert_eq!((p.harness, p.sut), (vec![0], vec![1]));
        let p = split(&(0..16).collect::<Vec<_>>()).unwrap();
        assert_eq!((p.harness.len(), p.sut.len()), (2, 14));
    }

    #[test]
    fn a_pinned_thread_runs_only_where_it_was_pinned() {
        let cores = available();
        assert!(!cores.is_empty());
        let last = *cores.last().unwrap();
        let got = std::thread::spawn(move || {
            pin_current(&[last]).unwrap();
            available()
        })
        .join()
        .unwrap();
        assert_eq!(got, vec![last]);
    }
}
