//! session.toml's `form` and `multipart` tables: what loads, what is refused and with
//! which words.

use super::*;

#[test]
fn a_form_table_is_fields_with_its_content_type() {
    let text = "url = \"{{base}}/agents/a/runs\"\nform = { message = \"[[plimsoll session={{session}} nonce={{nonce}} turn={{turn}}]] hi\", session_id = \"{{uuid}}\", stream = false, tag = [\"a\", \"b\"] }\n";
    let s = SessionSpec::parse(text, "session.toml").unwrap();
    let r = &s.turn[0];
    assert!(r.bodies.is_empty());
    let Some(Fields::Form(f)) = &r.fields else {
        panic!("{:?}", r.fields)
    };
    let names: Vec<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["message", "session_id", "stream", "tag", "tag"]);
    assert_eq!(f[2].1, "false");
    assert!(r.headers.contains(&(
        "content-type".into(),
        "application/x-www-form-urlencoded".into()
    )));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.json_keys(), None);
}

#[test]
fn body_and_form_together_is_an_error_naming_the_line_and_both_fields() {
    let text = "url = \"{{base}}/runs\"\nbody = '{}'\nform = { message = \"hi\" }\n";
    let e = SessionSpec::parse(text, "session.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("session.toml:3: request \"turn\" gives both body and form"),
        "{e}"
    );
    let text = "turns = 1\n[[turn]]\nname = \"run\"\nurl = \"{{base}}/runs\"\nbody = '{}'\nmultipart = { message = \"hi\" }\n";
    let e = SessionSpec::parse(text, "session.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("request \"run\" gives both body and multipart"),
        "{e}"
    );
    let text = "url = \"{{base}}/runs\"\nform = { a = \"1\" }\nmultipart = { b = \"2\" }\n";
    let e = SessionSpec::parse(text, "s.toml").unwrap_err().to_string();
    assert!(
        e.contains("give form (URL-encoded fields) or multipart"),
        "{e}"
    );
}

#[test]
fn form_values_are_checked_for_unknown_placeholders_and_files() {
    let text = "url = \"{{base}}/runs\"\nform = { message = \"{{thread}}\" }\n";
    let e = SessionSpec::parse(text, "s.toml").unwrap_err().to_string();
    assert!(e.contains("unknown placeholder {{thread}}"), "{e}");
    let text = "url = \"{{base}}/runs\"\nform = { file = { path = \"a.png\" } }\n";
    let e = SessionSpec::parse(text, "s.toml").unwrap_err().to_string();
    assert!(
        e.contains("form.file: a form field is text") && e.contains("multipart"),
        "{e}"
    );
    let text = "protocol = \"ws\"\nurl = \"{{ws_base}}/ws\"\nform = { a = \"1\" }\n";
    let e = SessionSpec::parse(text, "s.toml").unwrap_err().to_string();
    assert!(e.contains("form and multipart are HTTP bodies"), "{e}");
}

#[test]
fn multipart_reads_files_beside_the_session_file_and_generates_bytes() {
    let dir = std::env::temp_dir().join(format!("plimsoll-multipart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cat.png"), [137u8, 80, 78, 71]).unwrap();
    let file = dir.join("session.toml");
    let text = "url = \"{{base}}/upload\"\nmultipart = { message = \"turn {{turn}}\", image = { path = \"cat.png\" }, blob = { bytes = 100, filename = \"b.dat\", content_type = \"text/plain\" } }\n";
    let s = SessionSpec::parse(text, &file.display().to_string()).unwrap();
    let Some(Fields::Multipart(parts)) = &s.turn[0].fields else {
        panic!()
    };
    let by = |n: &str| &parts.iter().find(|p| p.name == n).unwrap().value;
    match by("image") {
        PartValue::File {
            filename,
            content_type,
            bytes,
        } => {
            assert_eq!(
                (filename.as_str(), content_type.as_str()),
                ("cat.png", "image/png")
            );
            assert_eq!(bytes.len(), 4);
        }
        v => panic!("{v:?}"),
    }
    match by("blob") {
        PartValue::File {
            filename,
            bytes,
            content_type,
        } => {
            assert_eq!(
                (filename.as_str(), content_type.as_str(), bytes.len()),
                ("b.dat", "text/plain", 100)
            );
        }
        v => panic!("{v:?}"),
    }
    let ct = &s.turn[0].headers[0].1;
    assert_eq!(ct, &format!("multipart/form-data; boundary={BOUNDARY}"));
    let missing = text.replace("cat.png", "dog.png");
    let e = SessionSpec::parse(&missing, &file.display().to_string())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("multipart.image: cannot read") && e.contains("dog.png"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
