//! Two readings JSON cannot say by itself: a key present with null apart from a key
//! absent, and an infinite ratio (serde_json writes a non-finite number as null).

use serde::{Deserialize, Deserializer};

/// A key present (even as null) is `Some`; an absent key is `None` (with `default`).
pub fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// A ratio written as null was infinite (a zero base).
pub fn infinite_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d).map(|v| Some(v.unwrap_or(f64::INFINITY)))
}

/// An interval whose ends were written as null were infinite.
pub fn infinite_pair_if_null<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<[f64; 2]>, D::Error> {
    let pair = Option::<[Option<f64>; 2]>::deserialize(d)?;
    Ok(pair.map(|[a, b]| [a.unwrap_or(f64::INFINITY), b.unwrap_or(f64::INFINITY)]))
}

/// A figure written as null was infinite (no limit of that kind).
pub fn infinite_f64_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Option::<f64>::deserialize(d).map(|v| v.unwrap_or(f64::INFINITY))
}
