//! An utterance spoken: its syllables planned (this folder's tables), their control
//! tracks built (`tracks`), and the tracks rendered as samples (`render`).

use super::{plan, render, tracks, Layout, Symbol};

/// Speaks the symbols at `fs` (8000, 16000 or 24000) with this layout: samples in
/// [−1, 1].
pub fn symbols(symbols: &[Symbol], fs: u32, layout: Layout) -> Vec<f32> {
    let p = plan(symbols);
    let t = tracks::build(&p, fs, layout);
    render::render(&t, fs)
}
