//! A bus session file read: `[[role]]` tables instead of requests, with the transport,
//! address, framing, mode, message count, rate and settle time around them, each checked
//! and its mistakes named with file and line (the format is in the `bus` runner's doc).
//! Running the bus is `crate::bus`'s business.

use crate::template::placeholders;
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;

type Res<T> = Result<T, spans::FileError>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Unix,
    Ws,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Unix => "unix",
            Transport::Ws => "ws",
        }
    }
}

/// How frames are cut out of a byte stream (TCP and Unix sockets; a WebSocket has its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// `\n`-terminated (a trailing `\r` is dropped); sending adds `\r\n`.
    Line,
    /// A big-endian u32 length, then that many bytes.
    U32,
    /// NUL-terminated (STOMP).
    Nul,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Publisher,
    Subscriber,
}

#[derive(Clone, Debug)]
pub struct Role {
    pub name: String,
    pub kind: Kind,
    pub count: Count,
    /// Frames sent once on connect (`SUBSCRIBE news`), templated.
    pub hello: Vec<String>,
    /// A subscriber is ready once a frame containing this arrives (else once connected
    /// and `hello` is sent).
    pub ready: Option<String>,
    /// A publisher's message, with `{{stamp}}` in it.
    pub send: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Count {
    Fixed(usize),
    /// A share of the step's concurrency (at least one).
    Share(f64),
}

#[derive(Clone, Debug)]
pub struct BusSpec {
    pub transport: Transport,
    /// host:port (tcp), a path (unix) or a URL (ws); `{{port}}`, `{{base}}`, `{{ws_base}}`.
    pub address: String,
    pub framing: Framing,
    /// Each message to one consumer (a work queue) rather than to every subscriber.
    pub queue: bool,
    /// Per publisher.
    pub messages: u32,
    /// Messages a second per publisher; 0 is as fast as the bus takes them.
    pub rate: f64,
    /// How long subscribers keep reading after the last publish for what is missing.
    pub settle_ms: u64,
    pub ready_timeout_ms: u64,
    pub ordered: bool,
    pub roles: Vec<Role>,
}

/// A bus session file: [[role]] tables of publishers and subscribers instead of requests,
/// with the transport, address, framing, mode and message pace around them.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct Raw {
    /// How roles connect: "tcp" | "unix" | "ws". Required.
    #[schemars(with = "Option<String>")]
    transport: Option<Spanned<String>>,
    /// Where to connect: host:port (tcp), a socket path (unix) or a URL (ws). Default
    /// "127.0.0.1:{{port}}" (tcp) or "{{ws_base}}/" (ws); required for unix.
    address: Option<String>,
    /// tcp or unix: how frames are cut: "line" (default; sending adds \r\n) | "u32"
    /// (big-endian length prefix) | "nul" (STOMP). A WebSocket frames its own.
    #[schemars(with = "Option<String>")]
    framing: Option<Spanned<String>>,
    /// "fanout" (default: every subscriber gets every message) | "queue" (each message goes
    /// to exactly one consumer).
    #[schemars(with = "Option<String>")]
    mode: Option<Spanned<String>>,
    /// Messages each publisher sends, 1 to 10000000. Default 100.
    #[schemars(with = "Option<i64>")]
    messages: Option<Spanned<i64>>,
    /// Messages a second per publisher, 0 or more; 0 (default) is as fast as the bus takes
    /// them.
    #[schemars(with = "Option<f64>")]
    rate: Option<Spanned<f64>>,
    /// How long subscribers keep reading after the last publish for messages still missing,
    /// 0 to 3600000 ms. Default 2000.
    #[schemars(with = "Option<i64>")]
    settle_ms: Option<Spanned<i64>>,
    /// How long a subscriber may wait after connecting for its ready frame, 1 to 3600000
    /// ms. Default 10000.
    #[schemars(with = "Option<i64>")]
    ready_timeout_ms: Option<Spanned<i64>>,
    /// true (default): each publisher's messages must arrive in order, and reordering is an
    /// integrity violation; false: out-of-order messages do not fail the step.
    ordered: Option<bool>,
    /// [[role]] tables: the publishers and subscribers; at least one of each.
    #[schemars(with = "Vec<RawRole>")]
    role: Vec<Spanned<RawRole>>,
}

/// A [[role]] of a bus: one kind of connection (publisher or subscriber), how many of it
/// open, and what it sends.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawRole {
    /// "publisher" | "subscriber" (or "consumer", the same, in a queue). Required.
    #[schemars(with = "String")]
    kind: Spanned<String>,
    /// The role's name in reports and as {{role}}. Default: its kind.
    name: Option<String>,
    /// A fixed number of connections, at least 1. Give count or share, not both.
    #[schemars(with = "Option<i64>")]
    count: Option<Spanned<i64>>,
    /// Connections as a share of --concurrency, above 0 and at most 1 (at least one
    /// connection). Give count or share, not both.
    #[schemars(with = "Option<f64>")]
    share: Option<Spanned<f64>>,
    /// Frames sent once on connect, e.g. ["SUBSCRIBE news"]; may use {{session}},
    /// {{index}}, {{port}}, {{role}} and {{pad N}}.
    #[serde(default)]
    hello: Vec<String>,
    /// Subscribers only: ready once a frame containing this text arrives (within
    /// ready_timeout_ms). Default: ready once connected and hello is sent.
    ready: Option<String>,
    /// Publishers only, required: the message published, which must contain {{stamp}};
    /// {{pad N}} adds N bytes of filler.
    #[schemars(with = "Option<String>")]
    send: Option<Spanned<String>>,
}

/// Placeholders a role's frames may use.
const NAMES: &[&str] = &["session", "index", "stamp", "port", "role"];

/// Whether a session file describes a bus (it has `[[role]]` tables).
pub fn is_bus(text: &str) -> bool {
    toml::from_str::<toml::Table>(text).is_ok_and(|t| t.contains_key("role"))
}

impl BusSpec {
    pub fn parse(text: &str, file: &str) -> Res<BusSpec> {
        let spans = spans::Spans::new(text, file);
        let raw: Raw = toml::from_str(text).map_err(|e| {
            spans.toml(
                &e,
                "a bus session takes transport, address, framing, mode, messages, rate, settle_ms, ready_timeout_ms, ordered and [[role]] tables",
            )
        })?;
        let (transport, framing, queue) = words(&raw, &spans)?;
        let address = match (raw.address, transport) {
            (Some(a), _) => a,
            (None, Transport::Tcp) => "127.0.0.1:{{port}}".into(),
            (None, Transport::Ws) => "{{ws_base}}/".into(),
            (None, Transport::Unix) => {
                return Err(spans.err(
                    None,
                    "transport = \"unix\" needs address = \"/path/to/the.sock\"",
                ))
            }
        };
        let int = |v: &Option<Spanned<i64>>, name: &str, lo: i64, hi: i64, default: i64| {
            spans.int(v, name, (lo, hi), default)
        };
        let rate = rate(&raw.rate, &spans)?;
        let roles = roles(raw.role, &spans)?;
        Ok(BusSpec {
            transport,
            address,
            framing,
            queue,
            messages: int(&raw.messages, "messages", 1, 10_000_000, 100)? as u32,
            rate,
            settle_ms: int(&raw.settle_ms, "settle_ms", 0, 3_600_000, 2000)? as u64,
            ready_timeout_ms: int(
                &raw.ready_timeout_ms,
                "ready_timeout_ms",
                1,
                3_600_000,
                10_000,
            )? as u64,
            ordered: raw.ordered.unwrap_or(true),
            roles,
        })
    }

    /// How many connections each role opens at concurrency `c`.
    pub fn counts(&self, c: usize) -> Vec<usize> {
        self.roles
            .iter()
            .map(|r| match r.count {
                Count::Fixed(n) => n,
                Count::Share(f) => ((f * c as f64).round() as usize).max(1),
            })
            .collect()
    }
}

/// The settings chosen by a word: transport, framing and mode (queue or fanout).
fn words(raw: &Raw, spans: &spans::Spans) -> Res<(Transport, Framing, bool)> {
    let transport = pick(
        &raw.transport,
        "transport",
        &[
            ("tcp", Transport::Tcp),
            ("unix", Transport::Unix),
            ("ws", Transport::Ws),
        ],
        None,
        spans,
    )?;
    let framing = pick(
        &raw.framing,
        "framing",
        &[
            ("line", Framing::Line),
            ("u32", Framing::U32),
            ("nul", Framing::Nul),
        ],
        Some(Framing::Line),
        spans,
    )?;
    let queue = pick(
        &raw.mode,
        "mode",
        &[("fanout", false), ("queue", true)],
        Some(false),
        spans,
    )?;
    Ok((transport, framing, queue))
}

fn rate(rate: &Option<Spanned<f64>>, spans: &spans::Spans) -> Res<f64> {
    match rate {
        None => Ok(0.0),
        Some(r) if r.get_ref().is_finite() && *r.get_ref() >= 0.0 => Ok(*r.get_ref()),
        Some(r) => Err(spans.err(
            Some(r.span()),
            format!(
                "rate must be ≥ 0 messages a second (0: as fast as it goes; got {})",
                r.get_ref()
            ),
        )),
    }
}

/// Every role, and at least one publisher and one subscriber among them.
fn roles(raw: Vec<Spanned<RawRole>>, spans: &spans::Spans) -> Res<Vec<Role>> {
    let roles = raw
        .into_iter()
        .map(|r| role(r, spans))
        .collect::<Res<Vec<_>>>()?;
    for (kind, word) in [
        (Kind::Publisher, "publisher"),
        (Kind::Subscriber, "subscriber"),
    ] {
        if !roles.iter().any(|r| r.kind == kind) {
            return Err(spans.err(
                None,
                format!("a bus needs at least one [[role]] with kind = \"{word}\""),
            ));
        }
    }
    Ok(roles)
}

fn pick<T: Copy>(
    v: &Option<Spanned<String>>,
    name: &str,
    options: &[(&str, T)],
    default: Option<T>,
    spans: &spans::Spans,
) -> Res<T> {
    let words: Vec<String> = options.iter().map(|(w, _)| format!("{w:?}")).collect();
    match (v, default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(spans.err(
            None,
            format!("a bus session needs {name} = {}", words.join(" or ")),
        )),
        (Some(s), _) => options
            .iter()
            .find(|(w, _)| *w == s.get_ref().as_str())
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                spans.err(
                    Some(s.span()),
                    format!(
                        "{name} must be {} (got {:?})",
                        words.join(" or "),
                        s.get_ref()
                    ),
                )
            }),
    }
}

fn role(r: Spanned<RawRole>, spans: &spans::Spans) -> Res<Role> {
    let at: Range<usize> = r.span();
    let r = r.into_inner();
    let kind = match r.kind.get_ref().as_str() {
        "publisher" => Kind::Publisher,
        "subscriber" | "consumer" => Kind::Subscriber,
        other => {
            return Err(spans.err(
                Some(r.kind.span()),
                format!("kind must be \"publisher\" or \"subscriber\" (\"consumer\" in a queue; got {other:?})"),
            ))
        }
    };
    let count = match (&r.count, &r.share) {
        (Some(n), None) if *n.get_ref() >= 1 => Count::Fixed(*n.get_ref() as usize),
        (None, Some(f)) if *f.get_ref() > 0.0 && *f.get_ref() <= 1.0 => Count::Share(*f.get_ref()),
        (None, None) | (Some(_), Some(_)) => {
            return Err(spans.err(
                Some(at),
                "give a role either count = N (connections) or share = 0.5 (of --concurrency)",
            ))
        }
        (Some(n), None) => {
            return Err(spans.err(Some(n.span()), "count must be at least 1"));
        }
        (None, Some(f)) => {
            return Err(spans.err(Some(f.span()), "share must be above 0 and at most 1"));
        }
    };
    let send = match (kind, r.send) {
        (Kind::Publisher, Some(s)) if s.get_ref().contains("{{stamp}}") => s.into_inner(),
        (Kind::Publisher, Some(s)) => return Err(spans.err(
            Some(s.span()),
            "a publisher's send must carry {{stamp}} (Plimsoll's publisher, sequence and send time), e.g. send = \"PUBLISH news {{stamp}}\"",
        )),
        (Kind::Publisher, None) => {
            return Err(spans.err(
                Some(at),
                "a publisher needs send = \"… {{stamp}} …\": the message it publishes",
            ))
        }
        (Kind::Subscriber, Some(s)) => {
            return Err(spans.err(
                Some(s.span()),
                "a subscriber does not send messages; what it sends on connect goes in hello = [\"…\"]",
            ))
        }
        (Kind::Subscriber, None) => String::new(),
    };
    for t in r.hello.iter().chain([&send]) {
        if let Some(p) =
            placeholders(t).find(|p| !NAMES.contains(p) && crate::template::pad_len(p).is_none())
        {
            return Err(spans.err(
                Some(at.clone()),
                format!(
                    "unknown placeholder {{{{{p}}}}} in a role; use {}, or {{{{pad N}}}} (N bytes of filler)",
                    NAMES.join(", ")
                ),
            ));
        }
    }
    Ok(Role {
        name: r.name.unwrap_or_else(|| r.kind.get_ref().clone()),
        kind,
        count,
        hello: r.hello,
        ready: r.ready,
        send,
    })
}
