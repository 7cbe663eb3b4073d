//! Watching the system under test (SUT).
//!
//! `tree` samples a whole process tree from /proc (RSS, OS threads, CPU time, open
//! file descriptors) cheaply enough to run every 50 ms against a SUT with tens of
//! thousands of threads: one `stat` read per process, never one per thread. `sut`
//! starts the SUT fresh in its own process group with a private scratch directory,
//! waits for it to be ready, and stops it — gracefully, then by force — reaping every
//! process it started; `disk` watches its scratch directory's size and room; `log` reads its stdout and stderr for warnings and errors;
//! `net` counts its TCP connections by remote port;
//! `affinity` pins Plimsoll and the SUT to cores of their own.
//! Driving load and judging results are not this crate's business.

pub mod affinity;
pub mod cgroup;
pub mod disk;
pub mod external;
pub mod log;
pub mod machine;
pub mod net;
pub mod pressure;
pub mod sampler;
pub mod sut;
pub mod tree;

pub use sampler::{Sampler, Series, Summary};
pub use sut::{Ready, Stopped, Sut, SutError, SutSpec};
pub use tree::{sample_tree, TreeSample};
