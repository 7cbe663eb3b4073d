//! A call's room, made and joined: the room made through the server API, the agent sent
//! for as the dispatch says, and the caller joined over the signal connection.

use super::join::{self, Signal};
use super::server::Server;
use super::{api, token};
use crate::error::CallError;
use crate::place::Dispatch;
use std::time::{Duration, Instant};

/// A call's room, made and joined: the caller in it, its agent sent for.
pub struct Entered {
    pub(crate) signal: Signal,
    server: Server,
    pub room: String,
    /// The room made and the agent sent for (the server API's two calls).
    pub made: Duration,
    /// From the room made to the caller joined (`/rtc` opened, `JoinResponse` read).
    pub joined: Duration,
    /// The server's version, as its `JoinResponse` says.
    pub server_version: String,
}

impl Entered {
    /// Leaves, and closes the room so the agent's job ends with the call.
    pub async fn leave(self) {
        self.signal.leave().await;
        let _ = api::delete_room(&self.server, &self.room).await;
    }
}

/// Makes `room`, has its agent sent as `dispatch` says, and joins it as `identity`, each
/// part within `timeout`.
pub async fn enter(
    server: &Server,
    dispatch: &Dispatch,
    room: &str,
    identity: &str,
    timeout: Duration,
) -> Result<Entered, CallError> {
    let began = Instant::now();
    let within = |what: &'static str| {
        move |_| {
            CallError::new(
                "timeout",
                format!("livekit: {what} took over {} ms", timeout.as_millis()),
            )
        }
    };
    tokio::time::timeout(timeout, api::create_room(server, room, 10))
        .await
        .map_err(within("making the room"))??;
    if let Dispatch::Named(agent) = dispatch {
        tokio::time::timeout(timeout, api::dispatch(server, room, agent))
            .await
            .map_err(within("dispatching the agent"))??;
    }
    let made = began.elapsed();
    let token = token::join(
        &server.key,
        &server.secret,
        room,
        identity,
        Duration::from_secs(3600),
    )?;
    let signal = join::join(server, &token, timeout).await?;
    Ok(Entered {
        server_version: signal.joined.server_version.clone(),
        signal,
        server: server.clone(),
        room: room.to_string(),
        made,
        joined: began.elapsed() - made,
    })
}
