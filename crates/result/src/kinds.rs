//! The kinds a document names with a word: a step's outcome, which side bounded it, a
//! level's standing against the budget, the wall, how sure a reading is. Enums, so a
//! misspelt kind does not compile; serialized as the words the documents have always held.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! words {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $w:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $w)] $v),+
        }

        impl $name {
            /// The word the documents hold.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$v => $w),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

words!(
    /// How a step ended: ok, or the collapse its evidence names (`unknown`: the shards of
    /// a merge do not add up to one run).
    Outcome {
        Ok = "ok",
        OomKilled = "oom_killed",
        ThreadExhaustion = "thread_exhaustion",
        Timeout = "timeout",
        ErrorRate = "error_rate",
        Integrity = "integrity",
        Crashed = "crashed",
        DiskFull = "disk_full",
        Unknown = "unknown",
    }
);

#[allow(clippy::derivable_impls)]
impl Default for Outcome {
    fn default() -> Self {
        Outcome::Ok
    }
}

impl Outcome {
    pub fn is_ok(self) -> bool {
        self == Outcome::Ok
    }
}

words!(
    /// Which side of a step saturated: the system under test, or Plimsoll itself.
    Bound {
        Sut = "sut",
        Harness = "harness",
    }
);

#[allow(clippy::derivable_impls)]
impl Default for Bound {
    fn default() -> Self {
        Bound::Sut
    }
}

words!(
    /// A level against the budget.
    Standing {
        Holds = "holds",
        Over = "over",
        Collapsed = "collapsed",
    }
);

words!(
    /// A point of a sweep: a level's standing, or not run (a smaller value of its row
    /// collapsed, or Ctrl-C stopped the sweep first).
    PointStanding {
        Holds = "holds",
        Over = "over",
        Collapsed = "collapsed",
        Skipped = "skipped",
    }
);

#[allow(clippy::derivable_impls)]
impl Default for PointStanding {
    fn default() -> Self {
        PointStanding::Skipped
    }
}

impl From<Standing> for PointStanding {
    fn from(s: Standing) -> Self {
        match s {
            Standing::Holds => PointStanding::Holds,
            Standing::Over => PointStanding::Over,
            Standing::Collapsed => PointStanding::Collapsed,
        }
    }
}

words!(
    /// What a ladder hit first.
    WallKind {
        Cpu = "cpu",
        Memory = "memory",
        Harness = "harness",
        /// A limit inside the SUT (queueing) with no resource at its wall.
        Internal = "internal",
        /// A client pool held flat (connections to one peer).
        Pool = "pool",
        /// The provider's quotas or generation slots.
        Provider = "provider",
        /// One thread (or a few) at a core's worth while the process is below its cap.
        Thread = "thread",
        None = "none",
    }
);

words!(
    /// How sure a reading of the curve is.
    Confidence {
        Clear = "clear",
        Weak = "weak",
        None = "none",
        Insufficient = "insufficient",
        /// The latency knee turns at the last level: widen the ladder.
        AtTheEnd = "at_the_end",
        /// Latency stayed flat over the whole ladder.
        Flat = "flat",
    }
);

#[allow(clippy::derivable_impls)]
impl Default for WallKind {
    fn default() -> Self {
        WallKind::None
    }
}

words!(
    /// How work went through a step: kept pace, backed up through it, or failed.
    StepState {
        Stable = "stable",
        /// Turns took longer and longer through the step: work queued faster than it left.
        Backlogged = "backlogged",
        /// Sessions failed or timed out.
        Overloaded = "overloaded",
    }
);
