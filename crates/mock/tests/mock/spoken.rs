//! The replies the mock speaks aloud are listed for a shard's words check
//! (`POST /plimsoll/spoken`): whose reply, and its text.

use super::serve::raw;
use mock::{MockOptions, MockServer, Scenario};

#[tokio::test]
async fn a_reply_spoken_is_listed_with_its_session() {
    let scenario = "[audio]\ntts_speed = 50\ntts_first_byte_ms = 0\n[models.instant]\nttft_ms = 0\ntok_ms = 0\n[models.tts]\nttft_ms = 0\n";
    let server = MockServer::start(MockOptions {
        scenario: Scenario::parse(scenario, "test.toml").unwrap(),
        seed: Some(5),
        ..MockOptions::default()
    })
    .await
    .unwrap();
    let content = "[[plimsoll session=s1 nonce=psn0000000000000001 turn=1]] hi";
    let body =
        serde_json::json!({"model": "instant", "messages": [{"role": "user", "content": content}]});
    let (s, _, reply) = raw(
        &server,
        "/v1/chat/completions",
        "",
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(s, 200);
    let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
    let text = reply["choices"][0]["message"]["content"].as_str().unwrap();
    let speech = serde_json::json!({"model": "tts", "input": text, "voice": "alloy", "response_format": "pcm"});
    let (s, _, _) = raw(
        &server,
        "/v1/audio/speech",
        "",
        speech.to_string().as_bytes(),
    )
    .await;
    assert_eq!(s, 200);
    let (s, _, listed) = raw(&server, "/plimsoll/spoken", "", b"60000 0 8").await;
    assert_eq!(s, 200);
    let listed: serde_json::Value = serde_json::from_slice(&listed).unwrap();
    assert_eq!(listed, serde_json::json!({"spoken": [["s1", [text]]]}));
    // Not three numbers: none listed, not an error.
    let (s, _, listed) = raw(&server, "/plimsoll/spoken", "", b"soon").await;
    assert_eq!((s, listed), (200, br#"{"spoken":[]}"#.to_vec()));
}
