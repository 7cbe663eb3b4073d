//! The TCP connections a process tree holds, by the remote port they go to: a pool's
//! ceiling shows as a count that stays flat while sessions grow.
//!
//! A process's sockets are the `socket:[inode]` links among its descriptors
//! (`/proc/PID/fd`); what each one is connected to is in the kernel's table for its
//! network namespace (netlink's sock_diag for our own namespace, `/proc/PID/net/tcp`
//! and `tcp6` for another). A socket whose local port is one the tree listens on was
//! accepted (a client of the SUT): those are counted apart, as inbound.

use std::collections::{BTreeMap, HashMap, HashSet};

/// Established connections at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Connections {
    /// Outbound connections by remote port.
    pub by_port: BTreeMap<u16, u32>,
    /// Connections accepted on a port the tree listens on.
    pub inbound: u32,
    /// The ports the tree listens on.
    pub listening: std::collections::BTreeSet<u16>,
}

/// One row of `/proc/net/tcp` (or one socket sock_diag lists): the local and remote
/// port, the state and the inode.
use crate::sock_diag::Sock as Row;

const ESTABLISHED: u8 = 0x01;
const LISTEN: u8 = 0x0A;

/// The port of an `ADDR:PORT` field (hex, as the kernel writes it).
fn port_of(field: &str) -> Option<u16> {
    u16::from_str_radix(field.rsplit_once(':')?.1, 16).ok()
}

/// The rows of a `/proc/net/tcp` (or `tcp6`) text; the header and torn lines are skipped.
fn rows(text: &str) -> Vec<Row> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(Row {
                local: port_of(f.get(1)?)?,
                remote: port_of(f.get(2)?)?,
                state: u8::from_str_radix(f.get(3)?, 16).ok()?,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// The socket inodes among a process's descriptors.
fn socket_inodes(pid: u32, into: &mut HashSet<u64>) {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return;
    };
    for e in dir.flatten() {
        if let Ok(target) = std::fs::read_link(e.path()) {
            let t = target.to_string_lossy();
            if let Some(n) = t.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
                if let Ok(inode) = n.parse() {
                    into.insert(inode);
                }
            }
        }
    }
}

/// Counts what the given rows say about the sockets in `owned`.
fn count(rows: &[Row], owned: &HashSet<u64>) -> Connections {
    let mine: Vec<&Row> = rows.iter().filter(|r| owned.contains(&r.inode)).collect();
    let listening: HashSet<u16> = mine
        .iter()
        .filter(|r| r.state == LISTEN)
        .map(|r| r.local)
        .collect();
    let mut c = Connections {
        listening: listening.iter().copied().collect(),
        ..Connections::default()
    };
    for r in mine.iter().filter(|r| r.state == ESTABLISHED) {
        if listening.contains(&r.local) {
            c.inbound += 1;
        } else {
            *c.by_port.entry(r.remote).or_default() += 1;
        }
    }
    c
}

/// The established TCP connections of these processes (IPv4 and IPv6), read from the
/// network namespace of each (processes in one namespace read its table once).
pub fn connections(pids: &[u32]) -> Connections {
    let mut owned = HashSet::new();
    let mut tables: HashMap<String, u32> = HashMap::new();
    for &pid in pids {
        socket_inodes(pid, &mut owned);
        if let Ok(ns) = std::fs::read_link(format!("/proc/{pid}/ns/net")) {
            tables
                .entry(ns.to_string_lossy().into_owned())
                .or_insert(pid);
        }
    }
    if owned.is_empty() {
        return Connections::default();
    }
    let ours = std::fs::read_link("/proc/self/ns/net").ok();
    let mut all = Vec::new();
    for (ns, pid) in &tables {
        // Our own namespace is asked through netlink, which leaves out the states not
        // counted here (TIME_WAIT above all) in the kernel; another is read as text.
        if ours
            .as_ref()
            .is_some_and(|o| o.to_string_lossy() == ns.as_str())
        {
            if let Some(socks) = crate::sock_diag::tcp_sockets(&[ESTABLISHED, LISTEN]) {
                all.extend(socks);
                continue;
            }
        }
        for file in ["tcp", "tcp6"] {
            let text = std::fs::read_to_string(format!("/proc/{pid}/net/{file}"));
            all.extend(rows(&text.unwrap_or_default()));
        }
    }
    count(&all, &owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 101 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:D432 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 102 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:D433 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 103 1 0000000000000000 20 4 30 10 -1
   4: 0100007F:D434 0100007F:18EB 06 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1
   5: 0100007F:D435 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 20 4 30 10 -1
";

    #[test]
    fn outbound_by_remote_port_and_inbound_apart() {
        let owned: HashSet<u64> = [100, 101, 102, 103].into_iter().collect();
        let c = count(&rows(TABLE), &owned);
        // 0x18EB = 6379: two of ours (inode 999 is someone else's, the TIME_WAIT row has no owner).
        assert_eq!(c.by_port, BTreeMap::from([(6379, 2)]));
        // 0x1F90 = 8080 is listened on: the connection from :54321 was accepted.
        assert_eq!(c.inbound, 1);
    }

    #[test]
    fn counts_the_connections_this_process_holds() {
        use std::net::{TcpListener, TcpStream};
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let held: Vec<TcpStream> = (0..5)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let accepted: Vec<TcpStream> = (0..5).map(|_| server.accept().unwrap().0).collect();
        let c = connections(&[std::process::id()]);
        // Both ends are ours: five out to `port`, five accepted on it.
        assert_eq!(c.by_port.get(&port), Some(&5), "{c:?}");
        assert!(c.inbound >= 5, "{c:?}");
        drop(held);
        drop(accepted);
        let c = connections(&[std::process::id()]);
        assert_eq!(c.by_port.get(&port), None, "closed: {c:?}");
    }
}
