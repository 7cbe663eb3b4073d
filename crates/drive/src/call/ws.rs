//! The WebSocket a phone-line transport runs over (Twilio Media Streams, raw PCM): dialled
//! within the call's time, each message sent or read with its failure named as the step
//! counts it, closed briefly at the end. What the messages say is the transports' own.

use super::transport::Dial;
use crate::run::Failure;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

type Stream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A call's WebSocket to the bot.
pub(crate) struct Ws(Box<Stream>);

impl Ws {
    /// Dials the bot's URL within the call's time.
    pub async fn dial(d: &Dial<'_>) -> Result<Ws, Failure> {
        match tokio::time::timeout(d.timeout, tokio_tungstenite::connect_async(d.url)).await {
            Ok(Ok((ws, _))) => Ok(Ws(Box::new(ws))),
            Ok(Err(e)) => Err(Failure::new("connect", format!("{}: {e}", d.url))),
            Err(_) => Err(Failure::new(
                "timeout",
                format!(
                    "{}: no WebSocket within {} ms",
                    d.url,
                    d.timeout.as_millis()
                ),
            )),
        }
    }

    pub async fn send(&mut self, m: Message) -> Result<(), Failure> {
        self.0.send(m).await.map_err(|e| {
            Failure::new(
                "dropped",
                format!("the bot's socket broke while Plimsoll sent: {e}"),
            )
        })
    }

    /// The bot's next message; an error when the socket closed or broke.
    pub async fn next(&mut self) -> Result<Message, Failure> {
        match self.0.next().await {
            Some(Ok(Message::Close(_))) | None => {
                Err(Failure::new("dropped", "the bot closed the call's socket"))
            }
            Some(Err(e)) => Err(Failure::new(
                "dropped",
                format!("the call's socket broke: {e}"),
            )),
            Some(Ok(m)) => Ok(m),
        }
    }

    /// Closes the socket, waiting half a second at most for the bot's answer.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_millis(500), self.0.close(None)).await;
    }
}
