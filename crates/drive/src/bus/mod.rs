//! A bus step: publishers and subscribers instead of request/reply sessions.
//!
//! `run` connects them, publishes and waits; `peer` is one publisher or subscriber on
//! its connection; `report` turns what they saw into the step's report, with the
//! account (lost, duplicated, out of order, fairness) from `tally`. Reading the bus file
//! is `spec::BusSpec`'s business, framing bytes on a socket `framed`'s.
//!
//! ```toml
//! transport = "tcp"              # "tcp", "unix" (address = a socket path) or "ws"
//! address = "127.0.0.1:{{port}}" # the default for tcp; ws: "{{ws_base}}/"
//! framing = "line"               # tcp/unix: "line" (\n; sending adds \r\n), "u32"
//!                                # (big-endian length prefix) or "nul" (STOMP)
//! mode = "fanout"                # every subscriber gets every message; "queue": each
//!                                # message goes to exactly one consumer
//! messages = 50                  # per publisher
//! rate = 0                       # messages a second per publisher (0: as fast as it goes)
//! settle_ms = 2000               # after the last publish, how long to wait for stragglers
//! ordered = true                 # a publisher's messages must arrive in order
//!
//! [[role]]
//! kind = "subscriber"            # or "consumer" (the same, in a queue)
//! share = 1.0                    # of --concurrency; or count = 100
//! hello = ["SUBSCRIBE news"]     # frames sent on connect
//! ready = "subscribe"            # ready once a frame containing this comes back
//!
//! [[role]]
//! kind = "publisher"
//! count = 1
//! send = "PUBLISH news {{stamp}}" # {{stamp}} is required; {{pad N}} adds N bytes
//! ```
//!
//! Every subscriber connects and is ready before the first message is sent; then every
//! publisher sends its messages, each carrying a stamp (`pst.<run>.<publisher>.<seq>.<µs>`)
//! that the subscribers find anywhere in what they receive (inside JSON, RESP, STOMP).
//! Subscribers read until every message has arrived or `settle_ms` after the last
//! publish. Per subscriber: lost, duplicated and out-of-order messages and the first
//! message's latency; in a queue, which consumer got how many (fairness). In the step's
//! RESULT a bus delivery is a "turn": turn and session latency are delivery latency,
//! first-token latency is the first message's.

mod peer;
mod report;
mod run;
pub mod tally;

pub use run::drive;
