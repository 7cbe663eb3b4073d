//! `plimsoll schema`: the JSON Schemas of Plimsoll's config files, made from the types
//! that read them (editors complete and check keys from them: Taplo's `#:schema` line),
//! and `--reference`, the page of every key (docs/config.md) written from the same
//! schemas, so a key's description is the same in both.

use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct SchemaArgs {
    /// Which file's schema to print: plimsoll, session, bus or scenario.
    #[arg(value_name = "NAME", required_unless_present_any = ["out", "reference"])]
    pub name: Option<String>,
    /// Write every schema into this directory as NAME.schema.json (what `schemas/` holds).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the reference of every key, as Markdown (what docs/config.md holds).
    #[arg(long)]
    pub reference: bool,
}

/// A config file's schema, made by the generator it is given from the types that read
/// the file.
type Make = fn(schemars::SchemaGenerator) -> schemars::Schema;

/// Each config file: its schema's name, the file it describes, and its schema.
pub const FILES: &[(&str, &str, Make)] = &[
    ("plimsoll", "plimsoll.toml", experiment::schema),
    ("session", "session.toml", drive::spec::session_schema),
    ("bus", "session.toml (a bus)", drive::spec::bus_schema),
    (
        "scenario",
        "scenario.toml",
        mock::provider::scenario_file::schema,
    ),
];

/// A file's schema as every one is made: JSON Schema draft 7 (what Taplo reads), titled
/// with the file it describes, fit for TOML (see `schema_reference::tidy`).
fn made((_, file, make): &(&str, &str, Make)) -> serde_json::Value {
    let mut s = make(schemars::generate::SchemaSettings::draft07().into_generator());
    s.insert("title".into(), (*file).into());
    let mut v = s.to_value();
    super::schema_reference::tidy(&mut v);
    v
}

/// A schema as the file `schemas/NAME.schema.json` holds it.
fn text(file: &(&str, &str, Make)) -> String {
    serde_json::to_string_pretty(&made(file)).unwrap_or_default() + "\n"
}

/// Every schema written into `dir` as NAME.schema.json.
pub fn write_all(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    for f in FILES {
        let p = dir.join(format!("{}.schema.json", f.0));
        std::fs::write(&p, text(f)).map_err(|e| anyhow::anyhow!("writing {}: {e}", p.display()))?;
    }
    Ok(())
}

pub fn run(a: SchemaArgs) -> anyhow::Result<u8> {
    if a.reference {
        let schemas: Vec<(&str, serde_json::Value)> =
            FILES.iter().map(|f| (f.1, made(f))).collect();
        print!("{}", super::schema_reference::page(&schemas));
        return Ok(0);
    }
    if let Some(dir) = &a.out {
        write_all(dir)?;
        eprintln!("wrote {} schemas into {}", FILES.len(), dir.display());
        return Ok(0);
    }
    let name = a.name.unwrap_or_default();
    match FILES.iter().find(|(n, _, _)| *n == name) {
        Some(f) => {
            print!("{}", text(f));
            Ok(0)
        }
        None => {
            let names: Vec<&str> = FILES.iter().map(|f| f.0).collect();
            anyhow::bail!(
                "no schema named {name:?}: the names are {}",
                names.join(", ")
            )
        }
    }
}
