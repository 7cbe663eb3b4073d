//! One WebSocket per session (`protocol = "ws"`): each turn sends one text message and
//! reads until the message that ends the turn; the reply is that message, read as JSON.
//! The turn loop around it is `talk`'s.

use super::talk::{Link, Reply, Turn};
use crate::address::target;
use crate::checks::reply_json;
use crate::framed::Ws;
use crate::http::Pace;
use crate::run::Failure;
use futures_util::{SinkExt, StreamExt};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// A session's WebSocket, opened by its first turn.
#[derive(Default)]
pub(super) struct WsLink {
    ws: Option<Ws>,
}

impl Link for WsLink {
    async fn turn(&mut self, t: &Turn<'_>, url: String, body: String) -> Result<Reply, Failure> {
        target(&url, t.allow_remote).map_err(|e| Failure::new("config", e.to_string()))?;
        let fut = turn(&mut self.ws, &url, body, &t.spec.ws_done, t.pace_bps);
        let reply = match tokio::time::timeout(t.timeout(), fut).await {
            Err(_) => {
                self.ws = None;
                return Err(Failure::new(
                    "timeout",
                    format!("no complete reply within {} ms", t.spec.turn_timeout_ms),
                ));
            }
            Ok(r) => r?,
        };
        Ok(Reply {
            doc: reply_json(false, &reply.last),
            first: reply.first,
            headers: None,
        })
    }
}

/// What a turn saw: the first message's arrival and the message that ended it.
struct WsReply {
    first: Option<Instant>,
    last: Vec<u8>,
}

fn ends_turn(msg: &[u8], done: &Option<(String, Option<serde_json::Value>)>) -> bool {
    match done {
        None => true,
        Some((pointer, want)) => serde_json::from_slice::<serde_json::Value>(msg)
            .ok()
            .and_then(|v| v.pointer(pointer).cloned())
            .is_some_and(|got| want.as_ref().is_none_or(|w| *w == got)),
    }
}

/// Opens the socket if needed, sends `body`, reads to the end of the turn — a slow
/// consumer (`pace_bps`) no faster than that many bytes a second.
async fn turn(
    link: &mut Option<Ws>,
    url: &str,
    body: String,
    done: &Option<(String, Option<serde_json::Value>)>,
    pace_bps: Option<f64>,
) -> Result<WsReply, Failure> {
    if link.is_none() {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| Failure::new("connect", format!("{url}: {e}")))?;
        *link = Some(ws);
    }
    let ws = link.as_mut().expect("opened above");
    let broken = |e: tokio_tungstenite::tungstenite::Error| {
        Failure::new("protocol", format!("websocket: {e}"))
    };
    ws.send(Message::text(body)).await.map_err(broken)?;
    let mut first = None;
    let mut pace = Pace::new(pace_bps);
    while let Some(msg) = ws.next().await {
        let msg = msg.map_err(broken)?;
        let data = match msg {
            Message::Text(t) => t.as_bytes().to_vec(),
            Message::Binary(b) => b.to_vec(),
            Message::Close(_) => break,
            _ => continue,
        };
        first.get_or_insert_with(Instant::now);
        if let Some(p) = pace.as_mut() {
            p.took(data.len()).await;
        }
        if ends_turn(&data, done) {
            return Ok(WsReply { first, last: data });
        }
    }
    *link = None;
    Err(Failure::new(
        "protocol",
        "the WebSocket closed before the turn ended",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_end_rules() {
        assert!(ends_turn(b"anything", &None));
        let done = Some(("/type".to_string(), Some(serde_json::json!("done"))));
        assert!(ends_turn(br#"{"type":"done"}"#, &done));
        assert!(!ends_turn(br#"{"type":"delta"}"#, &done));
        assert!(!ends_turn(b"not json", &done));
        assert!(ends_turn(br#"{"final":1}"#, &Some(("/final".into(), None))));
    }
}
