//! Signaling, as the bots speak it: the caller's SDP offer sent over HTTP and the bot's
//! answer read back. Pipecat's SmallWebRTC: `POST /api/offer` with `{sdp, type, pc_id,
//! restart_pc}`, answered `{sdp, type, pc_id}` once the bot has gathered its candidates.
//! WHIP (RFC 9725): `POST` of `application/sdp`, answered `201 Created` with the answer
//! and a `Location` to `DELETE` when the call hangs up. The caller's one host candidate is
//! in its offer, so neither needs a trickled candidate.

use crate::error::CallError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;

/// How a bot takes a call's offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signaling {
    /// Pipecat's SmallWebRTC transport: JSON on `POST /api/offer`.
    Pipecat,
    /// WHIP (RFC 9725): `application/sdp` in, `201` with a `Location` out.
    Whip,
    /// A LiveKit room: made and joined over LiveKit's `/rtc` (`crate::livekit`).
    LiveKit,
}

impl Signaling {
    pub fn parse(s: &str) -> Option<Signaling> {
        match s {
            "pipecat" => Some(Signaling::Pipecat),
            "whip" => Some(Signaling::Whip),
            "livekit" => Some(Signaling::LiveKit),
            _ => None,
        }
    }
}

/// The bot's answer, and where to hang up (WHIP's session URL).
pub(crate) struct Answer {
    pub sdp: String,
    pub session: Option<String>,
}

/// One HTTP/1.1 request; the status, the `Location` header and the body.
pub(crate) async fn request(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    content_type: &str,
    body: Vec<u8>,
) -> Result<(u16, Option<String>, Vec<u8>), CallError> {
    let bad = |why: String| CallError::new("signaling", format!("{method} {url}: {why}"));
    let uri: hyper::Uri = url.parse().map_err(|e| bad(format!("not a URL ({e})")))?;
    let host = uri.host().ok_or_else(|| bad("no host".into()))?.to_string();
    let port = uri.port_u16().unwrap_or(80);
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| bad(format!("cannot connect ({e})")))?;
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| bad(e.to_string()))?;
    tokio::spawn(conn);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", format!("{host}:{port}"));
    if !body.is_empty() {
        req = req.header("content-type", content_type);
    }
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let req = req
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| bad(e.to_string()))?;
    let resp = send
        .send_request(req)
        .await
        .map_err(|e| bad(e.to_string()))?;
    let status = resp.status().as_u16();
    let location = resp
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| bad(e.to_string()))?
        .to_bytes()
        .to_vec();
    Ok((status, location, body))
}

fn head(body: &[u8]) -> String {
    String::from_utf8_lossy(body).chars().take(120).collect()
}

/// Sends `offer` to the bot at `url`; its answer.
pub(crate) async fn offer(
    how: Signaling,
    url: &str,
    headers: &[(String, String)],
    offer: &str,
) -> Result<Answer, CallError> {
    match how {
        Signaling::LiveKit => Err(CallError::new(
            "signaling",
            "a LiveKit call is placed by joining its room (rtc::livekit), not by an offer",
        )),
        Signaling::Pipecat => {
            let body = serde_json::json!({"sdp": offer, "type": "offer", "pc_id": null, "restart_pc": false});
            let (status, _, body) = request(
                "POST",
                url,
                headers,
                "application/json",
                body.to_string().into_bytes(),
            )
            .await?;
            if status != 200 {
                return Err(CallError::new(
                    "signaling",
                    format!("POST {url}: the bot answered {status}: {}", head(&body)),
                ));
            }
            let v: serde_json::Value = serde_json::from_slice(&body).map_err(|_| {
                CallError::new(
                    "signaling",
                    format!("POST {url}: the answer is not JSON: {}", head(&body)),
                )
            })?;
            let sdp = v["sdp"].as_str().ok_or_else(|| {
                CallError::new("signaling", format!("POST {url}: the answer has no \"sdp\" (SmallWebRTC answers {{sdp, type, pc_id}}): {}", head(&body)))
            })?;
            Ok(Answer {
                sdp: sdp.to_string(),
                session: None,
            })
        }
        Signaling::Whip => {
            let (status, location, body) = request(
                "POST",
                url,
                headers,
                "application/sdp",
                offer.as_bytes().to_vec(),
            )
            .await?;
            if status != 201 {
                return Err(CallError::new(
                    "signaling",
                    format!(
                        "POST {url}: a WHIP endpoint answers 201 Created, this one {status}: {}",
                        head(&body)
                    ),
                ));
            }
            // Deleted at hang-up only where the offer went: a Location elsewhere is not ours
            // to send to (load and requests stay where the user pointed them).
            let session = location
                .map(|l| resolve(url, &l))
                .filter(|l| l.starts_with(&origin(url)));
            Ok(Answer {
                sdp: String::from_utf8_lossy(&body).into_owned(),
                session,
            })
        }
    }
}

/// WHIP's hang-up: `DELETE` on the session's URL. Errors are not the call's: it is over.
pub(crate) async fn hang_up(session: &str, headers: &[(String, String)]) {
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(2),
        request("DELETE", session, headers, "", Vec::new()),
    )
    .await;
}

/// A URL's scheme, host and port, with the slash after them.
fn origin(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].find('/') {
        Some(j) => url[..start + j + 1].to_string(),
        None => format!("{url}/"),
    }
}

/// `location` resolved against the URL the offer went to.
fn resolve(base: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_string();
    }
    let origin_end = base
        .find("://")
        .map(|i| i + 3)
        .and_then(|i| base[i..].find('/').map(|j| i + j))
        .unwrap_or(base.len());
    match location.starts_with('/') {
        true => format!("{}{location}", &base[..origin_end]),
        false => {
            let dir = base
                .rfind('/')
                .filter(|&i| i >= origin_end)
                .unwrap_or(base.len());
            format!("{}/{location}", &base[..dir])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whip_location_is_resolved_against_the_endpoint() {
        let base = "http://127.0.0.1:8080/whip/endpoint";
        assert_eq!(
            resolve(base, "/whip/resource/1"),
            "http://127.0.0.1:8080/whip/resource/1"
        );
        assert_eq!(
            resolve(base, "resource/1"),
            "http://127.0.0.1:8080/whip/resource/1"
        );
        assert_eq!(resolve(base, "http://other:1/r"), "http://other:1/r");
        assert_eq!(origin(base), "http://127.0.0.1:8080/");
        assert!(!"http://other:1/r".starts_with(&origin(base)));
        assert_eq!(Signaling::parse("whip"), Some(Signaling::Whip));
        assert_eq!(Signaling::parse("livekit"), Some(Signaling::LiveKit));
        assert_eq!(Signaling::parse("sip"), None);
    }
}
