//! The JSON Schemas of the session files, made from the types that read them.

use schemars::{Schema, SchemaGenerator};

/// The JSON Schema of a request/reply session file, made by `g`.
pub fn session(g: SchemaGenerator) -> Schema {
    g.into_root_schema_for::<super::raw::Raw>()
}

/// The JSON Schema of a bus session file, made by `g`.
pub fn bus(g: SchemaGenerator) -> Schema {
    g.into_root_schema_for::<super::bus::Raw>()
}
