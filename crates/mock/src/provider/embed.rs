//! The model's embedding vectors: each input's vector is drawn from an RNG seeded by the
//! run's seed and the input's text, so the same text always gets the same unit-length
//! vector. Serving them is `serve/embeddings.rs`'s.

use crate::hash::fnv1a;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A unit vector of `dim` numbers for `text`, the same on every run with this seed.
pub fn vector(seed: u64, text: &str, dim: usize) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(fnv1a(seed, text.as_bytes()));
    let v: Vec<f32> = (0..dim).map(|_| rng.gen_range(-1.0f32..1.0)).collect();
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::MIN_POSITIVE);
    v.into_iter().map(|x| x / norm).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn vectors_are_unit_length_and_the_same_for_the_same_text() {
        let a = super::vector(7, "hello", 64);
        assert_eq!(a, super::vector(7, "hello", 64));
        assert_ne!(a, super::vector(7, "hullo", 64));
        assert_ne!(a, super::vector(8, "hello", 64));
        let norm: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
    }
}
