//! LiveKit's access token: a JWT signed HS256 with the API secret, its issuer the API key,
//! its subject the participant's identity, and a `video` grant saying what the holder may
//! do (join one room, publish and subscribe there; or, for the server API, create rooms
//! and run one room's agents).

use crate::error::CallError;
use serde::Serialize;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What a token lets its holder do, as LiveKit's `VideoGrant` names it.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct VideoGrant<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    room: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    room_join: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    room_create: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    room_admin: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    can_publish: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    can_subscribe: Option<bool>,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    sub: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'a str,
    nbf: u64,
    exp: u64,
    video: VideoGrant<'a>,
}

fn sign(
    key: &str,
    secret: &str,
    sub: &str,
    video: VideoGrant,
    ttl: Duration,
) -> Result<String, CallError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = Claims {
        iss: key,
        sub,
        name: sub,
        // A second's grace for a server clock a little behind ours.
        nbf: now.saturating_sub(1),
        exp: now + ttl.as_secs().max(60),
        video,
    };
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .map_err(|e| {
        CallError::new(
            "signaling",
            format!("livekit: cannot sign an access token: {e}"),
        )
    })
}

/// A caller's token: join `room` as `identity`, publish and subscribe there.
pub(crate) fn join(
    key: &str,
    secret: &str,
    room: &str,
    identity: &str,
    ttl: Duration,
) -> Result<String, CallError> {
    let video = VideoGrant {
        room: Some(room),
        room_join: true,
        can_publish: Some(true),
        can_subscribe: Some(true),
        ..VideoGrant::default()
    };
    sign(key, secret, identity, video, ttl)
}

/// The server API's token for one room: create it, and dispatch its agents.
pub(crate) fn admin(key: &str, secret: &str, room: &str) -> Result<String, CallError> {
    let video = VideoGrant {
        room: Some(room),
        room_create: true,
        room_admin: true,
        ..VideoGrant::default()
    };
    sign(key, secret, "", video, Duration::from_secs(600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_token_carries_livekit_s_claims_and_verifies_with_the_secret() {
        let t = join(
            "devkey",
            "secret",
            "call-1",
            "caller-1",
            Duration::from_secs(300),
        )
        .unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        v.set_required_spec_claims(&["exp", "nbf", "iss", "sub"]);
        let key = jsonwebtoken::DecodingKey::from_secret(b"secret");
        let got = jsonwebtoken::decode::<serde_json::Value>(&t, &key, &v)
            .unwrap()
            .claims;
        assert_eq!(got["iss"], "devkey");
        assert_eq!(got["sub"], "caller-1");
        assert_eq!(
            got["video"],
            serde_json::json!({"room": "call-1", "roomJoin": true, "canPublish": true, "canSubscribe": true})
        );
        assert!(jsonwebtoken::decode::<serde_json::Value>(
            &t,
            &jsonwebtoken::DecodingKey::from_secret(b"other"),
            &v
        )
        .is_err());
        let a = admin("devkey", "secret", "call-1").unwrap();
        let got = jsonwebtoken::decode::<serde_json::Value>(
            &a,
            &key,
            &jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256),
        )
        .unwrap()
        .claims;
        assert_eq!(
            got["video"],
            serde_json::json!({"room": "call-1", "roomCreate": true, "roomAdmin": true})
        );
    }
}
