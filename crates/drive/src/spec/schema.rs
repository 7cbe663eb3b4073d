//! The JSON Schemas of the session files, made from the types that read them.

use schemars::generate::SchemaSettings;

fn titled(mut s: schemars::Schema, title: &str) -> schemars::Schema {
    s.insert("title".into(), title.into());
    s
}

/// The JSON Schema of a request/reply session file.
pub fn session() -> schemars::Schema {
    let g = SchemaSettings::draft07().into_generator();
    titled(g.into_root_schema_for::<super::read::Raw>(), "session.toml")
}

/// The JSON Schema of a bus session file.
pub fn bus() -> schemars::Schema {
    let g = SchemaSettings::draft07().into_generator();
    titled(
        g.into_root_schema_for::<super::bus::Raw>(),
        "session.toml (a bus)",
    )
}
