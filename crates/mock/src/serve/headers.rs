//! What the mock reads from and writes to HTTP headers: the API key a request carries,
//! and the request id, rate-limit and retry-after headers of a response, each in the
//! API's own names (its dialect's).

use crate::pushback::quota::Reading;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use wire::{Api, RateReading};

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The API key a request carries (`-` for none).
pub fn key_of(headers: &HeaderMap) -> String {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    get("authorization")
        .map(|v| v.strip_prefix("Bearer ").unwrap_or(v).trim())
        .or_else(|| get("x-api-key").map(str::trim))
        .or_else(|| get("x-goog-api-key").map(str::trim))
        .filter(|k| !k.is_empty())
        .unwrap_or("-")
        .to_string()
}

/// A header of the request, if it is text.
pub fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The request id, in the header `api` sends it in.
pub fn add_request_id(h: &mut HeaderMap, api: Api, id: &str) {
    if let Ok(v) = HeaderValue::from_str(id) {
        h.insert(api.dialect().request_id_header(), v);
    }
}

/// The rate-limit headers of `api` for these readings.
pub fn put_headers(h: &mut HeaderMap, api: Api, readings: &[Reading]) {
    let dialect = api.dialect();
    for r in readings {
        let reading = RateReading {
            bucket: r.dim,
            limit: r.limit,
            remaining: r.remaining,
            reset_ms: r.reset_ms,
        };
        for (name, value) in dialect.rate_limit_headers(&reading, now_unix_ms()) {
            if let Ok(v) = HeaderValue::from_str(&value) {
                h.insert(HeaderName::from_static(name), v);
            }
        }
    }
}

/// `retry-after` in whole seconds (at least 1) and `retry-after-ms` exactly: what the
/// official SDKs read to time their retries.
pub fn put_retry_after(h: &mut HeaderMap, ms: u64) {
    if let Ok(v) = HeaderValue::from_str(&ms.div_ceil(1000).max(1).to_string()) {
        h.insert("retry-after", v);
    }
    if let Ok(v) = HeaderValue::from_str(&ms.to_string()) {
        h.insert("retry-after-ms", v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pushback::limits::Dim;
    use crate::pushback::quota::label;
    use wire::go_duration;

    #[test]
    fn headers_in_each_apis_format() {
        let r = [Reading {
            dim: Dim::Requests,
            limit: 600.0,
            remaining: 7,
            reset_ms: 1500,
        }];
        let mut h = HeaderMap::new();
        put_headers(&mut h, Api::ChatCompletions, &r);
        assert_eq!(h["x-ratelimit-limit-requests"], "600");
        assert_eq!(h["x-ratelimit-remaining-requests"], "7");
        assert_eq!(h["x-ratelimit-reset-requests"], "1.5s");
        let mut h = HeaderMap::new();
        put_headers(&mut h, Api::Messages, &r);
        assert_eq!(h["anthropic-ratelimit-requests-remaining"], "7");
        assert!(h["anthropic-ratelimit-requests-reset"]
            .to_str()
            .unwrap()
            .ends_with('Z'));
        assert_eq!(go_duration(360_000), "6m0s");
        assert_eq!(go_duration(20), "20ms");
        assert_eq!(label("sk-proj-abcdefghijkl"), "sk-p…ijkl");
    }
}
