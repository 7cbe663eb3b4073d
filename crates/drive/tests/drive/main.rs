//! The driver's integration tests, one executable (one link, not three): `turns`, the
//! driver against small real servers (WebSocket turns, HTTP checks, failures classified);
//! `raw`, raw socket sessions; `bus`, the bus's account with known answers; `common`,
//! what they share.

mod bus;
mod common;
mod raw;
mod turns;
