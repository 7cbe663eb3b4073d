//! Every judgement Plimsoll makes, as pure functions over typed documents: how one step
//! ended (`outcome`: from its evidence) and whether it was harness-bound; what a ladder of
//! RESULTs says (which levels hold within budget, the throughput knee and plateau, the
//! resource at its wall or a limit inside the system, a client pool held flat, or the
//! provider's quotas and slots, an agent worker refusing calls at its load threshold, a Universal Scalability Law fit, a capacity projection
//! with the provider's bill, how the SUT's stdio MCP servers grow with sessions, which growing resource runs out first); what a step's LLM calls cost at a price table's prices;
//! whether a soak's series leaks; what two builds' repeated RESULTs say (medians,
//! Mann–Whitney, bootstrap intervals, verdicts). No I/O, no clocks, no printing: the same
//! documents give the same answer.

pub mod admission;
pub mod binds;
pub mod budget;
pub mod call_cpu;
pub mod calls;
pub mod calls_collapse;
pub mod compare;
pub mod cost;
pub mod executor;
pub mod findings;
pub mod growth;
pub mod headline;
pub mod ladder;
pub mod leak;
pub mod line;
pub mod logs;
pub mod mcp;
pub mod memory;
pub mod outcome;
pub mod pace;
pub mod pool;
pub mod provider;
pub mod quota;
pub mod reading;
pub mod replicas;
pub mod sample;
pub mod scaling;
pub mod standing;
pub mod stats;
pub mod sweep;
pub mod threads;
pub mod throughput;
pub mod trust;
pub mod verdict;
pub mod wall;
pub mod workers;

pub use budget::Budget;
pub use scaling::{capacity, knee, usl, Capacity, Knee, Point, Usl};
