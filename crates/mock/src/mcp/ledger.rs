//! What the MCP server served to whom: every tool call counted per tool (an HDR
//! histogram of its scheduled latency), per agent session and per MCP session; errors by
//! kind; which stdio server processes relayed calls; and, for the integrity oracle, what
//! each call answered, found again by its arguments (`answers`). The calls a model asked
//! for are noted first (`issued`), so an MCP call is traced to the agent session whose
//! model asked for it.

use crate::mcp::summary::{McpSession, McpSummary, McpTool};
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// Answers kept for the oracle, at most, before the oldest half is forgotten.
const MAX_ANSWERS: usize = 200_000;
/// Answers kept per arguments (the same call retried or repeated).
const PER_KEY: usize = 4;

/// One answer a tool gave, as the oracle looks for it in the next model call.
#[derive(Clone, Debug)]
pub struct Answered {
    pub tool: String,
    pub text: Arc<str>,
    /// The agent session the call was traced to.
    pub session: Option<String>,
}

/// One call, as it is recorded.
pub struct Call<'a> {
    pub tool: &'a str,
    pub latency_ms: f64,
    /// `None`: a result; else the error's kind.
    pub error: Option<&'static str>,
    pub session: Option<&'a str>,
    pub mcp_session: Option<&'a str>,
    pub transport: &'static str,
    pub pid: Option<u32>,
}

/// One tool's calls, errors and latency: an HDR histogram, with the exact least and most
/// (a quantile is read within them, so a fixed latency reads as itself).
struct ToolTally {
    calls: u64,
    errors: u64,
    hist: Histogram<u64>,
    min_ms: f64,
    max_ms: f64,
}

impl ToolTally {
    fn new() -> ToolTally {
        ToolTally {
            calls: 0,
            errors: 0,
            hist: hist(),
            min_ms: f64::INFINITY,
            max_ms: 0.0,
        }
    }

    fn ms(&self, q: f64) -> f64 {
        let v = self.hist.value_at_quantile(q) as f64 / 1000.0;
        let v = v.clamp(self.min_ms.min(self.max_ms), self.max_ms);
        (v * 100.0).round() / 100.0
    }
}

#[derive(Default)]
struct Tally {
    requests: u64,
    calls: u64,
    errors: u64,
    errors_by_kind: BTreeMap<String, u64>,
    tools: BTreeMap<String, ToolTally>,
    sessions: HashMap<String, McpSession>,
    mcp_sessions: HashMap<String, HashSet<String>>,
    transports: BTreeMap<String, u64>,
    stdio_pids: HashSet<u32>,
}

/// The answers by canonical arguments, and the arguments in the order first answered
/// (to forget the oldest).
type Answers = (HashMap<String, VecDeque<Answered>>, VecDeque<String>);

#[derive(Default)]
pub struct McpLedger {
    tally: Mutex<Tally>,
    /// Canonical arguments → the answers given to them, newest last.
    answers: Mutex<Answers>,
    /// Canonical arguments of a call a model asked for → (agent session, tool).
    issued: Mutex<HashMap<String, (String, String)>>,
    /// Tool-call ids the oracle has reported (a conversation is checked at every call).
    reported: Mutex<HashSet<String>>,
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("static bounds are valid")
}

impl McpLedger {
    /// A message arrived (counted whatever it was).
    pub fn request(&self) {
        self.lock().requests += 1;
    }

    /// A request refused before it reached a tool.
    pub fn refused(&self, kind: &'static str) {
        *self.lock().errors_by_kind.entry(kind.into()).or_insert(0) += 1;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A model asked `session` to call MCP tool `tool` with these arguments.
    pub fn issued(&self, canonical_args: String, session: &str, tool: &str) {
        let mut m = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= MAX_ANSWERS {
            m.clear();
        }
        m.insert(canonical_args, (session.to_string(), tool.to_string()));
    }

    /// The agent session whose model asked for a call with these arguments to `tool`.
    pub fn caller(&self, canonical_args: &str, tool: &str) -> Option<String> {
        let m = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        m.get(canonical_args)
            .filter(|(_, t)| t == tool)
            .map(|(s, _)| s.clone())
    }

    /// Counts one tool call.
    pub fn call(&self, c: &Call) {
        let mut t = self.lock();
        t.calls += 1;
        let tool = t
            .tools
            .entry(c.tool.to_string())
            .or_insert_with(ToolTally::new);
        tool.calls += 1;
        let _ = tool.hist.record(((c.latency_ms * 1000.0) as u64).max(1));
        tool.min_ms = tool.min_ms.min(c.latency_ms);
        tool.max_ms = tool.max_ms.max(c.latency_ms);
        if let Some(kind) = c.error {
            tool.errors += 1;
            t.errors += 1;
            *t.errors_by_kind.entry(kind.into()).or_insert(0) += 1;
        }
        *t.transports.entry(c.transport.into()).or_insert(0) += 1;
        if let Some(pid) = c.pid {
            t.stdio_pids.insert(pid);
        }
        if let Some(s) = c.session {
            let e = t.sessions.entry(s.to_string()).or_default();
            e.calls += 1;
            e.ms += c.latency_ms;
            *e.tools.entry(c.tool.to_string()).or_insert(0) += 1;
        }
        if let Some(m) = c.mcp_session {
            let set = t.mcp_sessions.entry(m.to_string()).or_default();
            if let Some(s) = c.session {
                set.insert(s.to_string());
            }
        }
    }

    /// Keeps what a call answered, for the oracle.
    pub fn answered(&self, canonical_args: String, a: Answered) {
        let mut g = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        let (by_args, order) = &mut *g;
        if order.len() >= MAX_ANSWERS {
            for k in order.drain(..MAX_ANSWERS / 2) {
                by_args.remove(&k);
            }
        }
        let list = by_args.entry(canonical_args.clone()).or_default();
        if list.is_empty() {
            order.push_back(canonical_args);
        }
        if list.len() >= PER_KEY {
            list.pop_front();
        }
        list.push_back(a);
    }

    /// The answers given to calls with these arguments (oldest first).
    pub fn answers(&self, canonical_args: &str) -> Vec<Answered> {
        let g = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        g.0.get(canonical_args)
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// True the first time a violation about this tool call is reported.
    pub fn first_report(&self, call_id: &str) -> bool {
        let mut r = self.reported.lock().unwrap_or_else(|p| p.into_inner());
        if r.len() >= MAX_ANSWERS {
            r.clear();
        }
        r.insert(call_id.to_string())
    }

    /// The stdio server processes that relayed calls so far.
    pub fn stdio_pids(&self) -> Vec<u32> {
        self.lock().stdio_pids.iter().copied().collect()
    }

    /// Everything counted, or `None` when no message ever arrived.
    pub fn summary(&self) -> Option<McpSummary> {
        let t = self.lock();
        if t.requests == 0 {
            return None;
        }
        let tools = t
            .tools
            .iter()
            .map(|(name, x)| {
                let tool = McpTool {
                    calls: x.calls,
                    errors: x.errors,
                    max_ms: (x.max_ms * 100.0).round() / 100.0,
                    p50_ms: x.ms(0.5),
                    p99_ms: x.ms(0.99),
                };
                (name.clone(), tool)
            })
            .collect();
        let per: Vec<usize> = t
            .mcp_sessions
            .values()
            .map(HashSet::len)
            .filter(|n| *n > 0)
            .collect();
        let mean = if per.is_empty() {
            0.0
        } else {
            per.iter().sum::<usize>() as f64 / per.len() as f64
        };
        Some(McpSummary {
            calls: t.calls,
            errors: t.errors,
            errors_by_kind: t.errors_by_kind.clone(),
            mcp_sessions: t.mcp_sessions.len() as u64,
            requests: t.requests,
            sessions: t
                .sessions
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            sessions_per_mcp_session: (mean * 100.0).round() / 100.0,
            stdio_servers: t.stdio_pids.len() as u64,
            tools,
            transports: t.transports.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(
        tool: &'a str,
        ms: f64,
        session: Option<&'a str>,
        mcp: Option<&'a str>,
    ) -> Call<'a> {
        Call {
            tool,
            latency_ms: ms,
            error: None,
            session,
            mcp_session: mcp,
            transport: "http",
            pid: None,
        }
    }

    #[test]
    fn counts_per_tool_session_and_mcp_session() {
        let l = McpLedger::default();
        assert!(l.summary().is_none());
        for i in 0..100 {
            l.request();
            l.call(&call(
                "get",
                10.0 + i as f64,
                Some(if i % 2 == 0 { "s1" } else { "s2" }),
                Some("m1"),
            ));
        }
        l.request();
        l.call(&Call {
            error: Some("tool_error"),
            ..call("put", 5.0, Some("s3"), Some("m2"))
        });
        l.refused("parse_error");
        let s = l.summary().unwrap();
        assert_eq!((s.calls, s.errors, s.requests), (101, 1, 101));
        assert_eq!(s.errors_by_kind["tool_error"], 1);
        assert_eq!(s.errors_by_kind["parse_error"], 1);
        let get = &s.tools["get"];
        assert_eq!(get.calls, 100);
        assert!(
            (get.p50_ms - 59.0).abs() < 1.0 && (get.p99_ms - 108.0).abs() < 1.5,
            "{get:?}"
        );
        assert_eq!(s.sessions["s1"].calls, 50);
        assert_eq!((s.mcp_sessions, s.sessions_per_mcp_session), (2, 1.5));
    }

    #[test]
    fn answers_are_found_by_their_arguments_and_calls_by_their_caller() {
        let l = McpLedger::default();
        l.issued("{\"key\":\"a\"}".into(), "s1", "get");
        assert_eq!(l.caller("{\"key\":\"a\"}", "get").as_deref(), Some("s1"));
        assert_eq!(l.caller("{\"key\":\"a\"}", "put"), None);
        for i in 0..6 {
            let a = Answered {
                tool: "get".into(),
                text: format!("v{i}").into(),
                session: None,
            };
            l.answered("{\"key\":\"a\"}".into(), a);
        }
        let got: Vec<String> = l
            .answers("{\"key\":\"a\"}")
            .iter()
            .map(|a| a.text.to_string())
            .collect();
        assert_eq!(got, ["v2", "v3", "v4", "v5"]);
    }
}
