//! The WebRTC caller's integration tests, one executable (one link, not two): `aiortc`,
//! the wire against a real aiortc peer; `livekit`, LiveKit as a call's signaling against a
//! real livekit-server.

mod aiortc;
mod livekit;
