//! The one table from an [`Api`] to the [`Dialect`] that speaks it, and the questions
//! asked of an API by its name: its parser, its error statuses and envelopes, which API a
//! client speaks.

use crate::api::Api;
use crate::dialect::Dialect;
use crate::error::{ErrorKind, WireError};
use crate::request::Request;

impl Api {
    /// The dialect that speaks this API: the one place a new API is listed.
    pub fn dialect(self) -> &'static dyn Dialect {
        match self {
            Api::ChatCompletions => &crate::chat::Chat,
            Api::Responses => &crate::responses::Responses,
            Api::Messages => &crate::messages::Messages,
            Api::Gemini => &crate::gemini::Gemini,
        }
    }

    pub fn name(self) -> &'static str {
        self.dialect().name()
    }

    /// Reads a request body of this API into the normalized form, or says which
    /// field is wrong.
    pub fn parse(self, body: &[u8]) -> Result<Request, WireError> {
        self.dialect().parse(body)
    }

    /// The API a client speaks that sent a request with these headers (for routes every
    /// API shares, such as `GET /v1/models`): the first whose required header is there,
    /// else Chat Completions.
    pub fn of_client(has: impl Fn(&str) -> bool) -> Api {
        Api::ALL
            .into_iter()
            .find(|a| a.dialect().required_header().is_some_and(|(h, _)| has(h)))
            .unwrap_or(Api::ChatCompletions)
    }
}

impl ErrorKind {
    /// HTTP status for this kind on the given API.
    pub fn status(self, api: Api) -> u16 {
        api.dialect().status(self)
    }
}

/// The JSON body of an error in `api`'s envelope.
pub fn error_body(api: Api, err: &WireError, request_id: &str) -> Vec<u8> {
    serde_json::to_vec(&api.dialect().error_body(err, request_id))
        .expect("a json! value always serializes")
}
