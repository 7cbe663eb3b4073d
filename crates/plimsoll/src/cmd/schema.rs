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

/// A config file's schema, made from the types that read the file.
type Make = fn() -> schemars::Schema;

/// Each config file: its schema's name, the file it describes, and its schema.
pub const FILES: &[(&str, &str, Make)] = &[
    ("plimsoll", "plimsoll.toml", experiment::schema),
    ("session", "session.toml", drive::spec::session_schema),
    ("bus", "session.toml (a bus)", drive::spec::bus_schema),
    (
        "scenario",
        "scenario.toml",
        mock::provider::scenario::schema,
    ),
];

/// A schema fit for TOML (see `schema_reference::tidy`).
pub fn value(schema: schemars::Schema) -> serde_json::Value {
    let mut v = schema.to_value();
    super::schema_reference::tidy(&mut v);
    v
}

/// A schema as the file `schemas/NAME.schema.json` holds it.
pub fn text(schema: schemars::Schema) -> String {
    serde_json::to_string_pretty(&value(schema)).unwrap_or_default() + "\n"
}

/// Every schema written into `dir` as NAME.schema.json.
pub fn write_all(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    for (name, _, schema) in FILES {
        let p = dir.join(format!("{name}.schema.json"));
        std::fs::write(&p, text(schema()))
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", p.display()))?;
    }
    Ok(())
}

pub fn run(a: SchemaArgs) -> anyhow::Result<u8> {
    if a.reference {
        let schemas: Vec<(&str, serde_json::Value)> = FILES
            .iter()
            .map(|(_, file, s)| (*file, value(s())))
            .collect();
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
        Some((_, _, schema)) => {
            print!("{}", text(schema()));
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
