//! The histogram every latency the driver records goes into: 1 µs to a day, three
//! significant digits. Below the runners and the run's recorder, which all make them.

use hdrhistogram::Histogram;

/// An empty latency histogram: 1 µs to a day, three significant digits.
pub(crate) fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 24 * 3_600_000_000, 3).expect("static bounds")
}
