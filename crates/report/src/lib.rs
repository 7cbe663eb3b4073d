//! Renders the documents that ladders, soaks and comparisons produce — the terminal table and
//! verdict, Markdown, and self-contained HTML — reading only those documents (fresh or
//! from the history), so a stored run renders the same again. It measures, analyses and
//! writes nothing itself.

pub mod arms;
pub mod bus;
pub mod html;
pub mod markdown;
pub mod shards;
pub mod soak;
pub mod svg;
pub mod sweep;
pub mod table;
pub mod timeline;
pub mod verdict;
