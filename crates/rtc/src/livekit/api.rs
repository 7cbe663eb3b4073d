//! LiveKit's server API, as its SDKs call it: Twirp over HTTP, protobuf in and out
//! (`POST /twirp/livekit.RoomService/CreateRoom`,
//! `POST /twirp/livekit.AgentDispatchService/CreateDispatch`), with the room's admin token
//! as a bearer. A refusal is Twirp's JSON `{code, msg}`, said in one line.

use super::server::Server;
use super::token;
use crate::error::CallError;
use crate::signal::request;
use livekit_protocol as proto;
use prost::Message;

/// One Twirp call: `method` of `service` with `body`; the decoded reply.
async fn twirp<R: Message + Default>(
    server: &Server,
    room: &str,
    service: &str,
    method: &str,
    body: impl Message,
) -> Result<R, CallError> {
    let url = format!("{}/twirp/livekit.{service}/{method}", server.http_base());
    let auth = token::admin(&server.key, &server.secret, room)?;
    let headers = [("authorization".to_string(), format!("Bearer {auth}"))];
    let (status, _, reply) = request(
        "POST",
        &url,
        &headers,
        "application/protobuf",
        body.encode_to_vec(),
    )
    .await
    .map_err(|e| server.unreachable(e))?;
    if status != 200 {
        return Err(CallError::new(
            "signaling",
            refusal(server, &url, status, &reply),
        ));
    }
    R::decode(reply.as_slice()).map_err(|e| {
        CallError::new(
            "signaling",
            format!("livekit: {url} answered what is not a {method} reply ({e})"),
        )
    })
}

/// A Twirp refusal in one line, naming the fix where the status tells it.
fn refusal(server: &Server, url: &str, status: u16, body: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let said = v["msg"].as_str().map_or_else(
        || String::from_utf8_lossy(body).chars().take(160).collect(),
        String::from,
    );
    match status {
        401 => format!(
            "livekit: 401 from {url}: the token's key or secret is wrong (key \"{}\"; set [voice] api_key/api_secret or LIVEKIT_API_KEY/LIVEKIT_API_SECRET as the server's keys): {said}",
            server.key
        ),
        _ => format!("livekit: {url} answered {status}: {said}"),
    }
}

/// Creates `room` (a room per call), empty for at most `empty_timeout_s` once the call left.
pub(crate) async fn create_room(
    server: &Server,
    room: &str,
    empty_timeout_s: u32,
) -> Result<(), CallError> {
    let req = proto::CreateRoomRequest {
        name: room.to_string(),
        empty_timeout: empty_timeout_s,
        departure_timeout: 1,
        ..Default::default()
    };
    let _: proto::Room = twirp(server, room, "RoomService", "CreateRoom", req).await?;
    Ok(())
}

/// Asks the server to send the worker registered as `agent` into `room`; the dispatch's id.
pub(crate) async fn dispatch(
    server: &Server,
    room: &str,
    agent: &str,
) -> Result<String, CallError> {
    let req = proto::CreateAgentDispatchRequest {
        agent_name: agent.to_string(),
        room: room.to_string(),
        ..Default::default()
    };
    let d: proto::AgentDispatch =
        twirp(server, room, "AgentDispatchService", "CreateDispatch", req).await?;
    Ok(d.id)
}

/// Closes `room`: every participant in it leaves (the agent's job ends).
pub(crate) async fn delete_room(server: &Server, room: &str) -> Result<(), CallError> {
    let req = proto::DeleteRoomRequest {
        room: room.to_string(),
    };
    let _: proto::DeleteRoomResponse =
        twirp(server, room, "RoomService", "DeleteRoom", req).await?;
    Ok(())
}
