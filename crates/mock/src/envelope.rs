//! An error in the API's own envelope, with the request id header that API sends.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use wire::{Api, WireError};

pub fn error_response(api: Api, err: &WireError, request_id: &str) -> Response {
    let status = StatusCode::from_u16(err.kind.status(api)).unwrap_or(StatusCode::BAD_REQUEST);
    let mut resp = Response::new(Body::from(wire::error_body(api, err, request_id)));
    *resp.status_mut() = status;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    add_request_id(h, api, request_id);
    resp
}

pub fn add_request_id(h: &mut HeaderMap, api: Api, id: &str) {
    if let Ok(v) = HeaderValue::from_str(id) {
        let name = if api == Api::Messages {
            "request-id"
        } else {
            "x-request-id"
        };
        h.insert(name, v);
    }
}
