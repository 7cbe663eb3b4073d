//! A request's body read under the mock's size limit: a larger body is refused with the
//! API's own error, before it is buffered whole (every route that takes a body uses it).

use crate::serve::app::App;
use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use wire::{ErrorKind, WireError};

/// Reads the body up to the configured limit; a larger body is refused without
/// being buffered whole.
pub(crate) async fn read_body(
    app: &App,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, WireError> {
    let limit = app.max_body_bytes;
    let too_large = || {
        WireError::new(
            ErrorKind::RequestTooLarge,
            format!("body: request exceeds the mock's limit of {limit} bytes; raise it with --max-body-mb"),
        )
    };
    let declared = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let limited = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if limited || e.to_string().contains("length limit") {
            too_large()
        } else {
            WireError::invalid("body", format!("could not be read: {e}"))
        }
    })
}
