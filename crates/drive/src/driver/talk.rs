//! Sessions that keep one link to the SUT across their turns — a WebSocket, a chat
//! client's HTTP connection and conversation, a raw socket — and send one message per
//! turn. The turn loop is here; each kind of link sits behind the [`Link`] trait (as
//! hyperfine's `Executor` sits between a benchmark and how its command runs), in `ws`,
//! `chat` and `raw`. Sessions of HTTP or SSE requests are `sequence`'s business.

use super::pace;
use super::sequence::unset_message;
use super::vars::Vars;
use crate::checks::{check_one, extract};
use crate::run::Ctx;
use crate::run::Failure;
use crate::spec::{Request, SessionSpec};
use crate::template::fill;
use serde_json::Value;
use std::time::Duration;
use tokio::time::Instant;

/// A session's connection of one kind, opened by its first turn and kept for the rest.
pub(super) trait Link {
    /// Sends one turn's `body` to `url` (both filled) and reads the reply as JSON.
    async fn turn(&mut self, t: &Turn<'_>, url: String, body: String) -> Result<Reply, Failure>;
}

/// One turn of a session: what a link needs to know to send it.
pub(super) struct Turn<'a> {
    pub spec: &'a SessionSpec,
    /// The session's one request (a link session has no sequence).
    pub req: &'a Request,
    pub vars: &'a [(&'a str, &'a str)],
    pub turn: u32,
    pub allow_remote: bool,
    /// A slow consumer's reading pace, bytes a second.
    pub pace_bps: Option<f64>,
}

impl Turn<'_> {
    /// `template` filled from the session's values, or a `config` error naming what is unset.
    pub fn fill(&self, template: &str) -> Result<String, Failure> {
        fill(template, self.vars).map_err(|name| {
            Failure::new(
                "config",
                unset_message(self.spec, self.req, &name, self.turn),
            )
        })
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.spec.turn_timeout_ms)
    }
}

/// What a link read back: the reply as JSON, when its first token came (streams), and
/// its headers (HTTP).
pub(super) struct Reply {
    pub doc: Option<Value>,
    pub first: Option<Instant>,
    pub headers: Option<hyper::HeaderMap>,
}

/// A session's turns over `link`, each timed, its extracts kept for the next.
pub(super) async fn talk(
    spec: &SessionSpec,
    vars: &mut Vars,
    ctx: &Ctx<'_>,
    mut link: impl Link,
) -> Result<(), Failure> {
    for turn in 1..=pace::turns(spec, vars) {
        pace::think(spec, vars, turn, ctx.recorder).await;
        let mut values: Vec<(String, String)> = vars.values.clone();
        values.push(("turn".into(), turn.to_string()));
        values.push(("prompt".into(), vars.prompt(turn)));
        let refs: Vec<(&str, &str)> = values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let t = Turn {
            spec,
            req: &spec.turn[0],
            vars: &refs,
            turn,
            allow_remote: ctx.allow_remote,
            pace_bps: vars.pace_bps,
        };
        let began = Instant::now();
        let (got, first) = one_turn(&t, &mut link)
            .await
            .map_err(|f| f.said(|m| format!("turn {turn}: {m}")))?;
        ctx.recorder
            .turn_done(turn, began, first, vars.pace_bps.is_some());
        for (k, v) in got {
            vars.set(k, v);
        }
    }
    Ok(())
}

/// One turn: the values it extracted and, for a stream, when its first token came.
async fn one_turn(
    t: &Turn<'_>,
    link: &mut impl Link,
) -> Result<(Vec<(String, String)>, Option<Instant>), Failure> {
    let req = t.req;
    let url = t.fill(&req.url)?;
    let body = t.fill(&req.bodies[(t.turn as usize - 1).min(req.bodies.len() - 1)])?;
    let reply = link.turn(t, url, body).await?;
    let values = judged(req, reply.doc.as_ref(), reply.headers.as_ref())?;
    Ok((values, reply.first))
}

/// The request's checks over the reply, then its extracts.
fn judged(
    req: &Request,
    doc: Option<&Value>,
    headers: Option<&hyper::HeaderMap>,
) -> Result<Vec<(String, String)>, Failure> {
    if req.extract.is_empty() && req.checks.is_empty() {
        return Ok(Vec::new());
    }
    for check in &req.checks {
        check_one(check, doc, None).map_err(|m| Failure::new("check_failed", m))?;
    }
    extract(&req.extract, doc, headers)
        .map_err(|m| Failure::new("extract_failed", format!("{}: {m}", req.at)))
}
