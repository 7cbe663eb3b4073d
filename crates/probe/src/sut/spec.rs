//! What starting a SUT takes: its command, environment, working directory, cores, how
//! to tell it is ready and how long to wait, how long it gets to stop; and the ways a
//! start fails. Starting it is the `sut` module's business.

use std::path::PathBuf;
use std::time::Duration;

/// How to tell the SUT is ready.
#[derive(Clone, Debug, PartialEq)]
pub enum Ready {
    /// A GET to this URL answers with any 2xx.
    Http(String),
    /// A TCP connect to 127.0.0.1:port succeeds.
    Port(u16),
    /// A line containing this text appears on stdout or stderr.
    Log(String),
    /// Running is enough (a harness that drives itself).
    Started,
}

#[derive(Clone, Debug)]
pub struct SutSpec {
    /// Program and arguments.
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub ready: Ready,
    pub ready_timeout: Duration,
    pub stop_grace: Duration,
    /// Pin the SUT (and all it starts) to these cores; empty: wherever it likes.
    pub cores: Vec<usize>,
    /// Lines of its log matching this count as warnings (see `log`).
    pub log_pattern: Option<regex::Regex>,
    /// What the process is to the run: its errors name it so.
    pub role: Role,
}

/// What a started process is to the run, as its errors name it and the setting that
/// gives it time to be ready.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Role {
    /// The system under test (`[sut]`).
    #[default]
    Sut,
    /// A dependency Plimsoll starts for it (`[[service]]`).
    Service,
}

impl Role {
    pub fn noun(self) -> &'static str {
        match self {
            Role::Sut => "the SUT",
            Role::Service => "the service",
        }
    }

    /// The setting that gives it longer to be ready.
    pub fn ready_timeout(self) -> &'static str {
        match self {
            Role::Sut => "[sut] ready_timeout_s",
            Role::Service => "its ready_timeout_s",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SutError {
    /// `why` names the real cause (a missing working directory, a program not on PATH),
    /// said once.
    #[error("could not start {} command {command:?}: {why}", .role.noun())]
    Spawn {
        role: Role,
        command: Vec<String>,
        why: String,
    },
    /// Said cause first (`log::crash`): the exception, some context, the whole output's file.
    #[error("{} exited during start-up ({status}); {}", .role.noun(), crate::log::crash::digest(.tail, .whole.as_deref()))]
    ExitedEarly {
        role: Role,
        status: String,
        tail: String,
        whole: Option<PathBuf>,
    },
    #[error("{} was not ready after {secs:.0} s ({what}); raise {} or check the readiness probe. Its last output:\n{}", .role.noun(), .role.ready_timeout(), crate::log::crash::digest(.tail, .whole.as_deref()))]
    NotReady {
        role: Role,
        secs: f64,
        what: String,
        tail: String,
        whole: Option<PathBuf>,
    },
}
