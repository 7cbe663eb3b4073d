//! OpenAI embeddings: reading `POST /v1/embeddings` and writing its `list` of vectors,
//! as floats or base64 (little-endian f32, what the official SDKs ask for by default).

use crate::error::WireError;
use crate::fields::*;
use crate::tokens::count_tokens;
use base64::Engine;
use serde_json::{json, Value};

/// An embeddings request, read.
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddingRequest {
    pub model: String,
    /// Each input as text (token arrays as their numbers joined by spaces).
    pub inputs: Vec<String>,
    pub dimensions: Option<u32>,
    pub base64: bool,
    /// Input tokens in all.
    pub tokens: u32,
}

pub fn parse_embeddings(body: &[u8]) -> Result<EmbeddingRequest, WireError> {
    let root = parse_root(body)?;
    let model = model(&root)?;
    let inputs = match root.get("input") {
        None | Some(Value::Null) => return Err(WireError::invalid("input", "is required")),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) if a.is_empty() => {
            return Err(WireError::invalid("input", "must not be empty"))
        }
        // One input given as tokens.
        Some(Value::Array(a)) if a.iter().all(Value::is_u64) => vec![tokens_text(a)],
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Array(t) if t.iter().all(Value::is_u64) => Ok(tokens_text(t)),
                other => Err(WireError::invalid(
                    join("input", i),
                    format!(
                        "must be a string or an array of token ids, got {}",
                        type_name(other)
                    ),
                )),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(WireError::invalid(
                "input",
                format!(
                    "must be a string or an array of strings or token arrays, got {}",
                    type_name(v)
                ),
            ))
        }
    };
    if inputs.len() > 2048 {
        return Err(WireError::invalid(
            "input",
            format!("at most 2048 inputs per request, got {}", inputs.len()),
        ));
    }
    let base64 = match opt_str(&root, "encoding_format", "")? {
        None | Some("float") => false,
        Some("base64") => true,
        Some(other) => {
            return Err(WireError::invalid(
                "encoding_format",
                format!("must be float or base64, got {other:?}"),
            ))
        }
    };
    let tokens = inputs.iter().map(|s| count_tokens(s).max(1)).sum();
    Ok(EmbeddingRequest {
        model,
        inputs,
        dimensions: opt_u32(&root, "dimensions", "")?,
        base64,
        tokens,
    })
}

fn tokens_text(a: &[Value]) -> String {
    a.iter().map(Value::to_string).collect::<Vec<_>>().join(" ")
}

/// The response body: one vector per input, in order.
pub fn render_embeddings(req: &EmbeddingRequest, vectors: &[Vec<f32>]) -> Vec<u8> {
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let embedding = if req.base64 {
                let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                Value::from(base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                json!(v)
            };
            json!({"object": "embedding", "index": i, "embedding": embedding})
        })
        .collect();
    let body = json!({
        "object": "list",
        "data": data,
        "model": req.model,
        "usage": {"prompt_tokens": req.tokens, "total_tokens": req.tokens},
    });
    serde_json::to_vec(&body).expect("a json! value always serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_in_every_form_and_base64_vectors() {
        let r = parse_embeddings(br#"{"model": "e", "input": ["a b", [1, 2]], "encoding_format": "base64", "dimensions": 3}"#).unwrap();
        assert_eq!(r.inputs, ["a b", "1 2"]);
        assert_eq!((r.dimensions, r.base64, r.tokens), (Some(3), true, 4));
        let out: Value = serde_json::from_slice(&render_embeddings(
            &r,
            &[vec![1.0, -0.5, 0.25], vec![0.0; 3]],
        ))
        .unwrap();
        let b64 = out["data"][0]["embedding"].as_str().unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let back: Vec<f32> = bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(back, [1.0, -0.5, 0.25]);
        assert_eq!(out["usage"]["prompt_tokens"], 4);
        let e = parse_embeddings(br#"{"model": "e", "input": [{"x": 1}]}"#).unwrap_err();
        assert!(
            e.message.starts_with("input.0: must be a string"),
            "{}",
            e.message
        );
        assert!(parse_embeddings(br#"{"model": "e", "input": []}"#).is_err());
    }
}
