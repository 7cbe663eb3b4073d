//! One `tools/call`: the tool found, its arguments read, the agent session that asked
//! for it traced (by the arguments its model gave), its fate decided — a scripted
//! failure (`first`, `every`, `attempts`), else a seeded draw of the tool's failure
//! rates — its latency drawn (fixed, or lognormal from its median and p99), its answer
//! computed (`tools.rs`), and all of it recorded in the ledger. The RNG of a call is
//! seeded by the scenario seed, the tool, the arguments and the attempt: the same call
//! gets the same fate and latency on every run, and a retry gets a fresh draw.

use crate::mcp::ledger::{Answered, Call};
use crate::mcp::server::{kind_of, Answer, McpServer, Via};
use crate::mcp::tools;
use crate::provider::model::Jitter;
use crate::spec::mcp::{FailWith, ToolSpec, When};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value};
use std::time::Duration;
use wire::mcp::jsonrpc::{code, RpcError};
use wire::mcp::protocol::{self, ServerInfo};

/// A scripted failure of the `nth` call of a tool (1 for the first), the `attempt`-th of
/// its arguments (0 for the first).
fn scripted(tool: &ToolSpec, nth: u64, attempt: u64) -> Option<FailWith> {
    tool.fail
        .iter()
        .find(|r| match r.when {
            When::First(n) => nth <= n,
            When::Every(m) => nth.is_multiple_of(m),
            When::Attempts(n) => attempt < n,
        })
        .map(|r| r.with)
}

/// A call refused before its tool ran: the error, and the kind it is counted under.
type Refusal = (RpcError, &'static str);

/// Distinct keys a counter keeps before it starts again.
const MAX_COUNTED: usize = 100_000;

fn bump<K: std::hash::Hash + Eq>(
    m: &std::sync::Mutex<std::collections::HashMap<K, u64>>,
    k: K,
) -> u64 {
    let mut m = m.lock().unwrap_or_else(|p| p.into_inner());
    // Counts per call's arguments would grow with every distinct call: past this many
    // they start again (a retry comes within seconds, not 100,000 calls later).
    if m.len() >= MAX_COUNTED && !m.contains_key(&k) {
        m.clear();
    }
    let n = m.entry(k).or_insert(0);
    *n += 1;
    *n
}

impl McpServer {
    /// Answers `tools/call`. `sid` is the legacy session it came in; `modern` the server
    /// identity a stateless result carries.
    pub(crate) fn call(
        &self,
        id: &Value,
        params: Option<&Map<String, Value>>,
        via: &Via,
        sid: Option<&str>,
        modern: Option<&ServerInfo>,
    ) -> Answer {
        let (tool, args) = match self.read_call(params) {
            Ok(x) => x,
            Err((e, kind)) => {
                self.ledger.refused(kind);
                return Answer::error(id, &e, if modern.is_some() { 400 } else { 200 });
            }
        };
        let canon = tools::canonical(&args);
        let caller = self.ledger.caller(&canon, &tool.name);
        let (fate, latency_ms) = self.decide(tool, &canon);
        let scope = caller.as_deref().or(sid).unwrap_or("-");
        let outcome = match fate {
            Some(FailWith::RpcError) => None,
            Some(FailWith::ToolError) => Some(Err((
                format!("{} failed (tool_error injected by plimsoll)", tool.name),
                "tool_error",
            ))),
            None => Some(tools::answer(tool, &args, scope, &self.kv)),
        };
        let (mut answer, error, text) = match outcome {
            None => {
                let e = RpcError::new(
                    code::INTERNAL_ERROR,
                    format!("{} failed (rpc_error injected by plimsoll)", tool.name),
                );
                (Answer::error(id, &e, 200), Some("rpc_error"), None)
            }
            Some(Ok(t)) => (
                Answer::ok(id, protocol::call_result(&t, false, modern)),
                None,
                Some(t),
            ),
            Some(Err((t, kind))) => (
                Answer::ok(id, protocol::call_result(&t, true, modern)),
                Some(kind),
                Some(t),
            ),
        };
        answer.delay = Duration::from_secs_f64(latency_ms.max(0.0) / 1000.0);
        self.ledger.call(&Call {
            tool: &tool.name,
            latency_ms,
            error,
            session: caller.as_deref(),
            mcp_session: sid
                .map(str::to_string)
                .or(via.pid.map(|p| format!("stdio-{p}")))
                .as_deref(),
            transport: via.transport.name(),
            pid: via.pid,
        });
        if let Some(text) = text {
            let a = Answered {
                tool: tool.name.clone(),
                text: text.into(),
                session: caller,
            };
            self.ledger.answered(canon, a);
        }
        answer
    }

    /// The fate of a call (a scripted failure, else a draw of the rates) and its latency.
    fn decide(&self, tool: &ToolSpec, canon: &str) -> (Option<FailWith>, f64) {
        let nth = bump(&self.nth, tool.name.clone());
        let key = crate::hash::fnv1a(
            crate::hash::fnv1a(self.seed, tool.name.as_bytes()),
            canon.as_bytes(),
        );
        let attempt = bump(&self.attempts, key) - 1;
        let mut rng = ChaCha8Rng::seed_from_u64(key ^ attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let u: f64 = rng.gen();
        let drawn = if u < tool.rpc_error {
            Some(FailWith::RpcError)
        } else if u < tool.rpc_error + tool.tool_error {
            Some(FailWith::ToolError)
        } else {
            None
        };
        let latency_ms = match tool.sigma {
            Some(sigma) => {
                tool.latency_ms
                    * crate::provider::timing::factor(Jitter::LogNormal { sigma }, &mut rng)
            }
            None => tool.latency_ms,
        };
        (scripted(tool, nth, attempt).or(drawn), latency_ms)
    }

    /// The tool named and its arguments, or the invalid-params error and its kind.
    fn read_call(
        &self,
        params: Option<&Map<String, Value>>,
    ) -> Result<(&ToolSpec, Map<String, Value>), Refusal> {
        let invalid = |m: String| {
            (
                RpcError::new(code::INVALID_PARAMS, m),
                kind_of(code::INVALID_PARAMS),
            )
        };
        let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Err(invalid(
                "Invalid params: tools/call needs params.name, a string".into(),
            ));
        };
        let Some(tool) = self.spec.tool(name) else {
            let known: Vec<&str> = self.spec.tools.iter().map(|t| t.name.as_str()).collect();
            let e = RpcError::new(
                code::INVALID_PARAMS,
                format!(
                    "Unknown tool: {name} (this server has: {})",
                    known.join(", ")
                ),
            );
            return Err((e, "unknown_tool"));
        };
        match params.and_then(|p| p.get("arguments")) {
            None | Some(Value::Null) => Ok((tool, Map::new())),
            Some(Value::Object(a)) => Ok((tool, a.clone())),
            Some(_) => Err(invalid(
                "Invalid params: params.arguments must be an object".into(),
            )),
        }
    }
}
