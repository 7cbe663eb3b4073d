//! The bot `plimsoll bench calls` calls: a Twilio Media Streams server that costs almost
//! nothing, so what is measured is the caller's side. It listens for the caller's speech
//! (energy per frame), and after 500 ms of silence answers with a reply spoken once in
//! Plimsoll's voice at startup, sent as Pipecat sends audio: 40 ms of µ-law a message,
//! twice as fast as it plays. It runs on a thread of its own, held to one core, with a
//! runtime of its own; its CPU is its thread's.

use crate::bot_thread::{self, BotThread};
use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

/// What the bot says each turn.
const REPLY: &str = "Thank you. Your order ships today and arrives on Friday.";

/// Starts the bot on `core` (its own thread and runtime) and waits for its address. It
/// refuses to start if its reply cannot be spoken.
pub(crate) fn start(core: usize) -> anyhow::Result<BotThread> {
    bot_thread::start("bench-bot", core, || {
        let speech = voice::speak(REPLY, 8000)
            .ok_or_else(|| anyhow::anyhow!("the bench bot's reply could not be spoken"))?;
        let reply = Arc::new(voice::pcm::to_ulaw(&speech));
        Ok(move |listener: TcpListener| async move {
            while let Ok((sock, _)) = listener.accept().await {
                let reply = reply.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, reply).await;
                });
            }
        })
    })
}

/// One call: hears the caller, answers each turn.
async fn serve(sock: tokio::net::TcpStream, reply: Arc<Vec<u8>>) -> anyhow::Result<()> {
    let ws = tokio_tungstenite::accept_async(sock).await?;
    let (mut tx, mut rx) = ws.split();
    let (out, mut queued) = tokio::sync::mpsc::unbounded_channel::<String>();
    // The sender: 40 ms messages every 20 ms.
    tokio::spawn(async move {
        while let Some(m) = queued.recv().await {
            if tx.send(Message::text(m)).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let (mut sid, mut speaking, mut quiet) = (String::new(), false, 0u32);
    while let Some(Ok(msg)) = rx.next().await {
        let Message::Text(t) = msg else { continue };
        let v: Value = serde_json::from_str(t.as_str()).unwrap_or_default();
        match v["event"].as_str() {
            Some("start") => sid = v["streamSid"].as_str().unwrap_or_default().to_string(),
            Some("media") => {
                let b = base64::engine::general_purpose::STANDARD
                    .decode(v["media"]["payload"].as_str().unwrap_or_default())
                    .unwrap_or_default();
                let x = voice::pcm::from_ulaw(&b);
                let loud = x.iter().map(|s| s * s).sum::<f32>() / (x.len().max(1) as f32) > 1e-4;
                (speaking, quiet) = match (loud, speaking) {
                    (true, _) => (true, 0),
                    (false, true) => (true, quiet + 1),
                    (false, false) => (false, 0),
                };
                if speaking && quiet >= 25 {
                    (speaking, quiet) = (false, 0);
                    for part in reply.chunks(320) {
                        let payload = base64::engine::general_purpose::STANDARD.encode(part);
                        let _ = out.send(json!({"event": "media", "streamSid": sid, "media": {"payload": payload}}).to_string());
                    }
                }
            }
            Some("stop") => break,
            _ => {}
        }
    }
    Ok(())
}
