//! One connection as a reader and a writer of frames: TCP or a Unix socket cut by a
//! framing (lines, a big-endian u32 length, NUL), or a WebSocket (one message, one
//! frame). The bus's publishers and subscribers and the raw socket sessions talk through
//! it; what the frames mean is theirs. Checking the address first is `address`'s business.

use crate::address::loopback;
use crate::run::Failure;
use crate::spec::{Framing, Transport};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A WebSocket client connection.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub enum Reader {
    Bytes(BufReader<Box<dyn AsyncRead + Unpin + Send>>, Framing),
    Ws(SplitStream<Ws>),
}

pub enum Writer {
    Bytes(Box<dyn AsyncWrite + Unpin + Send>, Framing),
    Ws(SplitSink<Ws, Message>),
}

/// Frames above this are a broken stream, not a message.
const MAX_FRAME: u32 = 64 << 20;

/// Connects to `address` over `transport`, framed by `framing`.
pub async fn open(
    transport: Transport,
    framing: Framing,
    address: &str,
    allow_remote: bool,
) -> Result<(Reader, Writer), Failure> {
    let refused = |e: std::io::Error| Failure::new("connect", format!("{address}: {e}"));
    match transport {
        Transport::Tcp => {
            let s = TcpStream::connect(loopback(address, allow_remote)?)
                .await
                .map_err(refused)?;
            let _ = s.set_nodelay(true);
            let (r, w) = s.into_split();
            Ok(bytes(Box::new(r), Box::new(w), framing))
        }
        Transport::Unix => {
            let s = tokio::net::UnixStream::connect(address)
                .await
                .map_err(refused)?;
            let (r, w) = s.into_split();
            Ok(bytes(Box::new(r), Box::new(w), framing))
        }
        Transport::Ws => {
            let (ws, _) = tokio_tungstenite::connect_async(address)
                .await
                .map_err(|e| Failure::new("connect", format!("{address}: {e}")))?;
            let (w, r) = ws.split();
            Ok((Reader::Ws(r), Writer::Ws(w)))
        }
    }
}

fn bytes(
    r: Box<dyn AsyncRead + Unpin + Send>,
    w: Box<dyn AsyncWrite + Unpin + Send>,
    framing: Framing,
) -> (Reader, Writer) {
    (
        Reader::Bytes(BufReader::with_capacity(64 << 10, r), framing),
        Writer::Bytes(w, framing),
    )
}

fn broken(e: impl std::fmt::Display) -> Failure {
    Failure::new("protocol", e.to_string())
}

impl Writer {
    pub async fn send(&mut self, frame: &[u8]) -> Result<(), Failure> {
        match self {
            Writer::Bytes(w, framing) => {
                let mut buf = Vec::with_capacity(frame.len() + 4);
                match framing {
                    Framing::Line => {
                        buf.extend_from_slice(frame);
                        buf.extend_from_slice(b"\r\n");
                    }
                    Framing::Nul => {
                        buf.extend_from_slice(frame);
                        buf.push(0);
                    }
                    Framing::U32 => {
                        buf.extend_from_slice(&(frame.len() as u32).to_be_bytes());
                        buf.extend_from_slice(frame);
                    }
                }
                w.write_all(&buf).await.map_err(broken)?;
                w.flush().await.map_err(broken)
            }
            Writer::Ws(w) => {
                // Text where it is text: most brokers read text frames.
                let msg = match String::from_utf8(frame.to_vec()) {
                    Ok(t) => Message::text(t),
                    Err(e) => Message::binary(e.into_bytes()),
                };
                w.send(msg).await.map_err(broken)
            }
        }
    }
}

impl Reader {
    /// The next frame; `None` when the other side closed.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, Failure> {
        match self {
            Reader::Bytes(r, Framing::U32) => {
                let n = match r.read_u32().await {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                    Err(e) => return Err(broken(e)),
                };
                if n > MAX_FRAME {
                    return Err(broken(format!("a length prefix of {n} bytes (framing = \"u32\" reads a big-endian u32 length first; is the bus framed another way?)")));
                }
                let mut buf = vec![0; n as usize];
                r.read_exact(&mut buf).await.map_err(broken)?;
                Ok(Some(buf))
            }
            Reader::Bytes(r, framing) => {
                let end = if *framing == Framing::Nul { 0 } else { b'\n' };
                let mut buf = Vec::new();
                let n = r.read_until(end, &mut buf).await.map_err(broken)?;
                if n == 0 {
                    return Ok(None);
                }
                if buf.last() == Some(&end) {
                    buf.pop();
                }
                if end == b'\n' && buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                Ok(Some(buf))
            }
            Reader::Ws(r) => loop {
                match r.next().await {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(broken(e)),
                    Some(Ok(Message::Text(t))) => return Ok(Some(t.as_bytes().to_vec())),
                    Some(Ok(Message::Binary(b))) => return Ok(Some(b.to_vec())),
                    Some(Ok(Message::Close(_))) => return Ok(None),
                    Some(Ok(_)) => continue,
                }
            },
        }
    }
}
