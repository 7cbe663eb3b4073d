//! The kernel's TCP sockets in one state or two, asked through netlink (`sock_diag`,
//! what `ss` uses) instead of read as text from `/proc/net/tcp`: the kernel skips the
//! other states itself (a machine that has run a few ramps holds thousands of TIME_WAIT
//! sockets, which the text table formats one line each: 2–9 ms a read) and sends fixed
//! binary records. Only this process's network namespace can be asked this way.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `SOCK_DIAG_BY_FAMILY` (linux/sock_diag.h).
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_HDR: usize = 16;
/// `struct inet_diag_req_v2`: family, protocol, ext, pad, states, then a 48-byte id.
const REQ_LEN: usize = 56;
/// `struct inet_diag_msg` up to its inode: family, state, timer, retrans, the 48-byte
/// id (sport, dport big-endian first), expires, rqueue, wqueue, uid, inode.
const MSG_LEN: usize = 72;

/// One socket: its local and remote port, its state (`/proc/net/tcp`'s numbers) and
/// its inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sock {
    pub local: u16,
    pub remote: u16,
    pub state: u8,
    pub inode: u64,
}

/// The TCP sockets (IPv4 and IPv6) of this network namespace in the given states
/// (`/proc/net/tcp`'s numbers: 1 established, 10 listen); `None` when netlink refuses.
pub fn tcp_sockets(states: &[u8]) -> Option<Vec<Sock>> {
    let mask = states.iter().fold(0u32, |m, s| m | 1 << s);
    // SAFETY: plain syscall; the fd is checked, then owned.
    let raw = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a new descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let (mut out, mut buf) = (Vec::new(), vec![0u8; 64 * 1024]);
    for family in [libc::AF_INET as u8, libc::AF_INET6 as u8] {
        ask(&fd, family, mask)?;
        read_all(&fd, &mut buf, &mut out)?;
    }
    Some(out)
}

/// Sends one dump request for `family`'s TCP sockets in the states of `mask`.
fn ask(fd: &OwnedFd, family: u8, mask: u32) -> Option<()> {
    let mut req = [0u8; NLMSG_HDR + REQ_LEN];
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    req[0..4].copy_from_slice(&((NLMSG_HDR + REQ_LEN) as u32).to_ne_bytes());
    req[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req[6..8].copy_from_slice(&flags.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    req[NLMSG_HDR] = family;
    req[NLMSG_HDR + 1] = libc::IPPROTO_TCP as u8;
    req[NLMSG_HDR + 4..NLMSG_HDR + 8].copy_from_slice(&mask.to_ne_bytes());
    // SAFETY: sends `req.len()` bytes from a live buffer on our socket (to the kernel:
    // a zeroed sockaddr_nl is the kernel's address).
    let sent = unsafe {
        let mut to: libc::sockaddr_nl = std::mem::zeroed();
        to.nl_family = libc::AF_NETLINK as u16;
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&to as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    (sent == req.len() as isize).then_some(())
}

/// Reads the dump's replies into `out` until the kernel says it is done.
fn read_all(fd: &OwnedFd, buf: &mut [u8], out: &mut Vec<Sock>) -> Option<()> {
    loop {
        // SAFETY: receives at most `buf.len()` bytes into a live buffer.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            return None;
        }
        if parse(&buf[..n as usize], out)? {
            return Some(());
        }
    }
}

/// One datagram's messages into `out`: `Some(true)` at the dump's end, `None` on an
/// error message or a torn one.
fn parse(mut data: &[u8], out: &mut Vec<Sock>) -> Option<bool> {
    let u32_at = |b: &[u8], i: usize| u32::from_ne_bytes(b[i..i + 4].try_into().expect("4"));
    while data.len() >= NLMSG_HDR {
        let len = u32_at(data, 0) as usize;
        let kind = u16::from_ne_bytes([data[4], data[5]]) as i32;
        if len < NLMSG_HDR || len > data.len() {
            return None;
        }
        match kind {
            libc::NLMSG_DONE => return Some(true),
            libc::NLMSG_ERROR => return None,
            _ if len >= NLMSG_HDR + MSG_LEN => {
                let m = &data[NLMSG_HDR..];
                out.push(Sock {
                    state: m[1],
                    local: u16::from_be_bytes([m[4], m[5]]),
                    remote: u16::from_be_bytes([m[6], m[7]]),
                    inode: u64::from(u32_at(m, 68)),
                });
            }
            _ => {}
        }
        // Messages are aligned to 4 bytes.
        let next = len.div_ceil(4) * 4;
        data = &data[next.min(data.len())..];
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn the_kernel_lists_the_sockets_the_text_table_does() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let held: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let _accepted: Vec<TcpStream> = (0..3).map(|_| server.accept().unwrap().0).collect();
        let socks = tcp_sockets(&[1, 10]).expect("netlink sock_diag answers");
        let ours = |f: &dyn Fn(&Sock) -> bool| socks.iter().filter(|s| f(s)).count();
        assert_eq!(ours(&|s| s.state == 10 && s.local == port), 1, "{socks:?}");
        assert_eq!(ours(&|s| s.state == 1 && s.remote == port), 3);
        assert_eq!(ours(&|s| s.state == 1 && s.local == port), 3);
        // Inodes as /proc/net/tcp gives them: every one of ours is there with its ports.
        let text = std::fs::read_to_string("/proc/self/net/tcp").unwrap();
        for s in socks.iter().filter(|s| s.local == port || s.remote == port) {
            let row = format!("{:04X} {:02X}", s.remote, s.state);
            let line = text.lines().find(|l| l.contains(&format!(" {} ", s.inode)));
            let line = line.unwrap_or_else(|| panic!("inode {} not in /proc: {s:?}", s.inode));
            let cols: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(format!("{} {}", &cols[2][9..], cols[3]), row, "{line}");
        }
        // Other states are left out by the kernel.
        assert!(socks.iter().all(|s| s.state == 1 || s.state == 10));
        drop(held);
    }
}
