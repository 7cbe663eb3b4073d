//! The SUT as one or more replicas: each its own process group on a port of its own (the
//! first on the step's port), started in turn and each ready before the load begins;
//! sampled together as one tree, stopped together, their logs read as one.

use probe::{Stopped, Sut, SutSpec};
use std::sync::Arc;

pub(crate) struct Fleet {
    suts: Vec<Sut>,
    /// Each replica's base URL, in order.
    pub bases: Vec<String>,
}

/// `spec` with `port` as the SUT's port: in its command (`{{port}}` already filled with the
/// step's port is replaced) and its PORT / PLIMSOLL_SUT_PORT.
fn for_port(spec: &SutSpec, first: u16, port: u16, k: usize) -> SutSpec {
    let mut s = spec.clone();
    if port != first {
        let (from, to) = (first.to_string(), port.to_string());
        s.command = s.command.iter().map(|w| w.replace(&from, &to)).collect();
        for (key, v) in s.env.iter_mut() {
            if key == "PORT" || key == "PLIMSOLL_SUT_PORT" || v.contains(&format!(":{from}")) {
                *v = v.replace(&from, &to);
            }
        }
        if let probe::Ready::Http(url) = &s.ready {
            s.ready = probe::Ready::Http(url.replace(&format!(":{from}"), &format!(":{to}")));
        }
        if s.ready == probe::Ready::Port(first) {
            s.ready = probe::Ready::Port(port);
        }
    }
    s.env.push(("PLIMSOLL_REPLICA".into(), k.to_string()));
    s
}

impl Fleet {
    /// Starts `n` replicas from `spec` (written for `port`), the others on free ports.
    pub async fn start(spec: &SutSpec, port: u16, n: usize) -> anyhow::Result<Fleet> {
        let mut suts = Vec::new();
        let mut bases = Vec::new();
        for k in 0..n.max(1) {
            let p = match k {
                0 => port,
                _ => std::net::TcpListener::bind("127.0.0.1:0")?
                    .local_addr()?
                    .port(),
            };
            let s = Sut::start(&for_port(spec, port, p, k))
                .await
                .map_err(|e| match n {
                    1 => anyhow::Error::new(e),
                    _ => anyhow::anyhow!("replica {} of {n}: {e}", k + 1),
                })?;
            suts.push(s);
            bases.push(format!("http://127.0.0.1:{p}"));
        }
        Ok(Fleet { suts, bases })
    }

    /// The first replica's pid (its cgroup, its soak series).
    pub fn pid(&self) -> u32 {
        self.suts[0].pid
    }

    /// Every process of every replica, found again at each call.
    pub fn pids(&self) -> probe::sampler::Pids {
        let roots: Vec<u32> = self.suts.iter().map(|s| s.pid).collect();
        Arc::new(move || {
            roots
                .iter()
                .flat_map(|r| probe::tree::tree_pids(*r))
                .collect()
        })
    }

    pub fn len(&self) -> usize {
        self.suts.len()
    }

    /// The first replica that exited by itself.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.suts.iter_mut().find_map(|s| s.exited())
    }

    /// Stops every replica: the first's ending, with every replica's files and log.
    pub async fn stop(self) -> Stopped {
        let mut all = Vec::new();
        for s in self.suts {
            all.push(s.stop().await);
        }
        let mut first = all.remove(0);
        for o in all {
            first.files_created += o.files_created;
            first.died_on_its_own |= o.died_on_its_own;
            first.whole = first.whole.or(o.whole);
            first.log.merge(o.log);
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_replica_gets_its_own_port_everywhere_the_first_had_it() {
        let spec = SutSpec {
            command: vec!["floor".into(), "--listen".into(), "127.0.0.1:4000".into()],
            env: vec![
                ("PORT".into(), "4000".into()),
                ("PLIMSOLL_SUT_PORT".into(), "4000".into()),
                ("OTHER".into(), "4000".into()),
            ],
            cwd: None,
            ready: probe::Ready::Http("http://127.0.0.1:4000/health".into()),
            ready_timeout: Duration::from_secs(1),
            stop_grace: Duration::from_secs(1),
            cores: Vec::new(),
            log_pattern: None,
            role: probe::Role::Sut,
        };
        let s = for_port(&spec, 4000, 4100, 1);
        assert_eq!(s.command[2], "127.0.0.1:4100");
        assert_eq!(s.env[0].1, "4100");
        assert_eq!(s.env[1].1, "4100");
        assert_eq!(
            s.env[2].1, "4000",
            "a value that only looks like the port stays"
        );
        assert_eq!(s.env[3], ("PLIMSOLL_REPLICA".into(), "1".into()));
        assert_eq!(
            s.ready,
            probe::Ready::Http("http://127.0.0.1:4100/health".into())
        );
        assert_eq!(for_port(&spec, 4000, 4000, 0).command, spec.command);
    }
}
