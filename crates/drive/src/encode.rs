//! Field bodies on the wire: a `form` table URL-encoded (as a browser's form and Python's
//! `urlencode` do: space as `+`, all but `A-Za-z0-9*-._` as `%XX`) and a `multipart`
//! table as `multipart/form-data` with the spec's fixed boundary. Each text value is
//! filled before it is encoded, so a `[[plimsoll …]]` marker arrives intact. Reading
//! the tables is `spec::form`'s business.

use crate::spec::{Fields, PartValue, BOUNDARY};

/// The body of `fields`, each text value filled by `fill` first (its error: the name of
/// a placeholder that has no value).
pub fn encode(
    fields: &Fields,
    fill: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<u8>, String> {
    match fields {
        Fields::Form(f) => {
            let mut pairs = Vec::with_capacity(f.len());
            for (k, v) in f {
                pairs.push(format!("{}={}", url_encode(k), url_encode(&fill(v)?)));
            }
            Ok(pairs.join("&").into_bytes())
        }
        Fields::Multipart(parts) => {
            let mut out = Vec::new();
            for p in parts {
                out.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
                let name = quoted(&p.name);
                match &p.value {
                    PartValue::Text(t) => {
                        out.extend_from_slice(
                            format!("content-disposition: form-data; name=\"{name}\"\r\n\r\n")
                                .as_bytes(),
                        );
                        out.extend_from_slice(fill(t)?.as_bytes());
                    }
                    PartValue::File {
                        filename,
                        content_type,
                        bytes,
                    } => {
                        out.extend_from_slice(
                            format!(
                                "content-disposition: form-data; name=\"{name}\"; filename=\"{}\"\r\ncontent-type: {content_type}\r\n\r\n",
                                quoted(filename)
                            )
                            .as_bytes(),
                        );
                        out.extend_from_slice(bytes);
                    }
                }
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
            Ok(out)
        }
    }
}

/// `application/x-www-form-urlencoded` of one name or value.
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A name inside a quoted header parameter: quotes and line breaks escaped as the HTML
/// standard's form encoder does.
fn quoted(s: &str) -> String {
    s.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Part;
    use std::sync::Arc;

    #[test]
    fn a_form_is_url_encoded_after_filling() {
        let f = Fields::Form(vec![
            (
                "message".into(),
                "[[plimsoll session={{session}} turn=1]] hi & bye".into(),
            ),
            ("stream".into(), "false".into()),
        ]);
        let body = encode(&f, |t| Ok(t.replace("{{session}}", "s0"))).unwrap();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "message=%5B%5Bplimsoll+session%3Ds0+turn%3D1%5D%5D+hi+%26+bye&stream=false"
        );
        let err = encode(&f, |_| Err("thread".to_string())).unwrap_err();
        assert_eq!(err, "thread");
    }

    #[test]
    fn multipart_has_each_part_and_the_closing_boundary() {
        let f = Fields::Multipart(vec![
            Part {
                name: "message".into(),
                value: PartValue::Text("turn {{turn}}".into()),
            },
            Part {
                name: "file".into(),
                value: PartValue::File {
                    filename: "a.bin".into(),
                    content_type: "application/octet-stream".into(),
                    bytes: Arc::new(vec![0, 1, 2]),
                },
            },
        ]);
        let body = encode(&f, |t| Ok(t.replace("{{turn}}", "2"))).unwrap();
        let mut want = format!("--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"message\"\r\n\r\nturn 2\r\n--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\ncontent-type: application/octet-stream\r\n\r\n").into_bytes();
        want.extend_from_slice(&[0, 1, 2]);
        want.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        assert_eq!(body, want);
    }
}
