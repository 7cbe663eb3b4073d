//! Starts the system under test (SUT) and watches it while a step runs: its processes,
//! memory, CPU, descriptors, connections, scratch disk and log, read from /proc, its
//! cgroup and its output.
//!
//! `sut` starts the SUT fresh in its own process group with a private scratch directory,
//! waits for it to be ready, and stops it — gracefully, then by force — reaping every
//! process it started. `sampler` samples its process tree on an interval into a
//! `summary` (`listing` says when to list its processes again), with `tree` reading one
//! sample from /proc (RSS, OS threads, CPU time, open descriptors) cheaply enough to run
//! every 50 ms against tens of thousands of threads — one `stat` read per process, never
//! one per thread — `pss` the tree's memory with each shared page counted once (`paced`,
//! as the connections are, to a share of a core), `cgroup`
//! the memory of the SUT's own cgroup and `net` its TCP connections by remote port
//! (asking the kernel through `sock_diag`); `pressure` reads CPU stall time; `disk`
//! watches its scratch directory's size and room; `log` reads its stdout and stderr for
//! warnings and errors; `external` finds processes Plimsoll did not start (a database, a
//! broker); `affinity` pins Plimsoll and the SUT to cores of their own; `machine`
//! fingerprints the host; `own` reads Plimsoll's own CPU by thread. Driving
//! load and judging results are not this crate's business.

pub mod affinity;
pub mod cgroup;
pub mod cpustat;
pub mod disk;
pub mod external;
pub mod families;
pub mod figures;
pub mod limits;
pub mod listing;
pub mod log;
pub mod machine;
pub mod net;
pub mod own;
pub mod paced;
pub mod pressure;
pub mod pss;
pub mod sampler;
pub mod sock_diag;
pub mod summary;
pub mod sut;
pub mod threads;
pub mod tree;

pub use sampler::{MachineCpu, MachinePoint, Sampler, Series, Summary};
pub use sut::{Ready, Role, Stopped, Sut, SutError, SutSpec};
pub use tree::{sample_tree, TreeSample};
