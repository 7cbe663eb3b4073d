//! One WebSocket per session: each turn sends one text message and reads until the
//! message that ends the turn.

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What a turn saw: the first message's arrival and the message that ended it.
pub struct WsReply {
    pub first: Option<Instant>,
    pub last: Vec<u8>,
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
pub async fn turn(
    link: &mut Option<Ws>,
    url: &str,
    body: String,
    done: &Option<(String, Option<serde_json::Value>)>,
    pace_bps: Option<f64>,
) -> Result<WsReply, (String, String)> {
    if link.is_none() {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .map_err(|e| ("connect".to_string(), format!("{url}: {e}")))?;
        *link = Some(ws);
    }
    let ws = link.as_mut().expect("opened above");
    let broken = |e: tokio_tungstenite::tungstenite::Error| {
        ("protocol".to_string(), format!("websocket: {e}"))
    };
    ws.send(Message::text(body)).await.map_err(broken)?;
    let mut first = None;
    let mut pace = crate::http::Pace::new(pace_bps);
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
    Err((
        "protocol".into(),
        "the WebSocket closed before the turn ended".into(),
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
