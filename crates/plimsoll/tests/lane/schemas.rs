//! The config schemas under `schemas/` and the reference page `docs/config.md` are what
//! `plimsoll schema` makes from the types that read the files (a changed type with a
//! schema not regenerated fails here: `PLIMSOLL_BLESS=1` rewrites them), and every
//! Plimsoll file under `examples/` and `scenarios/` is valid against its schema.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_plimsoll");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn plimsoll(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `file` holds `made`, or (blessing) is rewritten to.
fn same(file: &Path, made: &str) {
    if std::env::var_os("PLIMSOLL_BLESS").is_some() {
        std::fs::write(file, made).unwrap();
        return;
    }
    let held = std::fs::read_to_string(file).unwrap_or_default();
    assert!(
        held == made,
        "{} is not what `plimsoll schema` makes from the types: run PLIMSOLL_BLESS=1 cargo test --release -p plimsoll --test lane schemas:: and read the change",
        file.display()
    );
}

#[test]
fn the_schemas_and_the_reference_are_made_from_the_types() {
    for name in ["plimsoll", "session", "bus", "scenario"] {
        let file = root().join("schemas").join(format!("{name}.schema.json"));
        same(&file, &plimsoll(&["schema", name]));
    }
    same(
        &root().join("docs/config.md"),
        &plimsoll(&["schema", "--reference"]),
    );
}

/// Which schema a Plimsoll file follows, by what it holds; None for a file that is not
/// one of Plimsoll's (a price table is its own format, checked by its reader).
fn kind(t: &toml::Table) -> Option<&'static str> {
    let has = |k: &str| t.contains_key(k);
    if has("sut") || has("harness") {
        Some("plimsoll")
    } else if has("role") {
        Some("bus")
    } else if ["url", "turn", "protocol", "turns", "voice", "body"]
        .iter()
        .any(|k| has(k))
    {
        Some("session")
    } else if [
        "defaults",
        "models",
        "seed",
        "provider",
        "audio",
        "mcp",
        "cache",
        "integrity",
    ]
    .iter()
    .any(|k| has(k))
    {
        Some("scenario")
    } else {
        None
    }
}

fn tomls(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir()
            && !["node_modules", "target", ".venv", "__pycache__"].contains(&name.as_str())
        {
            tomls(&p, out);
        } else if name.ends_with(".toml")
            && !["pyproject.toml", "Cargo.toml"].contains(&name.as_str())
        {
            out.push(p);
        }
    }
}

fn validator(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("schemas").join(format!("{name}.schema.json")))
        .unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

#[test]
fn every_file_under_examples_and_scenarios_is_valid_against_its_schema() {
    let mut files = Vec::new();
    tomls(&root().join("examples"), &mut files);
    tomls(&root().join("scenarios"), &mut files);
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    let mut wrong = Vec::new();
    for f in &files {
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let Some(k) = kind(&t) else {
            wrong.push(format!(
                "{}: not recognised as a Plimsoll file",
                f.display()
            ));
            continue;
        };
        let doc = serde_json::to_value(&t).unwrap();
        for e in validator(k).iter_errors(&doc) {
            wrong.push(format!(
                "{} ({k}): {} at {}",
                f.display(),
                e,
                e.instance_path()
            ));
        }
        *checked.entry(k).or_default() += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Every kind was met, the files were many.
    assert_eq!(checked.len(), 4, "{checked:?}");
    assert!(files.len() >= 60, "{}", files.len());
}

#[test]
fn a_misspelt_key_or_a_wrong_type_is_invalid() {
    let doc = |t: &str| serde_json::to_value(toml::from_str::<toml::Table>(t).unwrap()).unwrap();
    let session = validator("session");
    assert!(session.is_valid(&doc("url = \"{{base}}/chat\"\nturns = 3\n")));
    assert!(!session.is_valid(&doc("url = \"{{base}}/chat\"\nturms = 3\n")));
    assert!(!session.is_valid(&doc("url = \"{{base}}/chat\"\nturns = \"three\"\n")));
    let cfg = validator("plimsoll");
    assert!(cfg.is_valid(&doc(
        "[sut]\ncommand = [\"app\"]\n[step]\nconcurrency = 4\n"
    )));
    assert!(!cfg.is_valid(&doc("[sut]\ncommand = [\"app\"]\n[step]\nconcurency = 4\n")));
    let scenario = validator("scenario");
    assert!(scenario.is_valid(&doc("[defaults]\nttft_ms = 100\n")));
    assert!(!scenario.is_valid(&doc("[defaults]\nttft = 100\n")));
}

#[test]
fn init_writes_the_schema_line_and_the_schemas_an_editor_reads() {
    let dir = std::env::temp_dir().join(format!("plimsoll-schema-init-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    plimsoll(&[
        "init",
        "--command",
        "python app.py --port {{port}}",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    for name in ["plimsoll", "session"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
        let first = text.lines().next().unwrap();
        let path = first.strip_prefix("#:schema ").expect(first);
        // The path counts from the file's directory, as Taplo reads it, and holds the
        // schema the repository publishes.
        let written = std::fs::read_to_string(dir.join(path)).unwrap();
        let published =
            std::fs::read_to_string(root().join("schemas").join(format!("{name}.schema.json")))
                .unwrap();
        assert_eq!(written, published);
        let doc = serde_json::to_value(toml::from_str::<toml::Table>(&text).unwrap()).unwrap();
        assert!(validator(name).is_valid(&doc), "{text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_misspelt_key_is_named_at_its_line_with_the_nearest_valid_one() {
    let dir = std::env::temp_dir().join(format!("plimsoll-schema-typo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("plimsoll.toml"), "[sut]\ncommand = [\"true\"]\n").unwrap();
    std::fs::write(
        dir.join("session.toml"),
        "url = \"{{base}}/chat\"\nturms = 3\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["check"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("session.toml:2: unknown field `turms` — did you mean `turns`?"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_key_an_editor_completes_has_a_description() {
    fn walk(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        if let Some(props) = v.get("properties").and_then(|p| p.as_object()) {
            for (k, p) in props {
                if p.get("description").is_none() {
                    out.push(format!("{at}.{k}"));
                }
            }
        }
        if let Some(m) = v.as_object() {
            for (k, x) in m {
                if !["default", "enum", "const"].contains(&k.as_str()) {
                    walk(x, &format!("{at}/{k}"), out);
                }
            }
        } else if let Some(a) = v.as_array() {
            a.iter().for_each(|x| walk(x, at, out));
        }
    }
    let mut missing = Vec::new();
    for name in ["plimsoll", "session", "bus", "scenario"] {
        let text =
            std::fs::read_to_string(root().join("schemas").join(format!("{name}.schema.json")))
                .unwrap();
        walk(&serde_json::from_str(&text).unwrap(), name, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "keys without a description: {missing:?}"
    );
}
