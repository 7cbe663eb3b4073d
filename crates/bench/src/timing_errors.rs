//! What the closed loop (`mock_bench`) and the burst (`burst_bench`) both report of the
//! timing seen at the client: how late the first delta events came and how far the
//! gaps between them strayed.

use hdrhistogram::Histogram;
use serde::Serialize;

/// How late the first delta events came and how far the gaps between them strayed, at
/// the client, in ms: what the closed loop and the burst both report.
#[derive(Clone, Debug, Serialize, Default)]
pub struct TimingErrors {
    pub ttft_err_p50_ms: f64,
    pub ttft_err_p99_ms: f64,
    pub ttft_err_max_ms: f64,
    pub interval_err_p50_ms: f64,
    pub interval_err_p99_ms: f64,
    pub interval_err_max_ms: f64,
}

impl TimingErrors {
    /// From the first tokens' and the gaps' histograms (µs).
    pub(crate) fn of(ttft: &Histogram<u64>, gaps: &Histogram<u64>) -> TimingErrors {
        let ms = |us: u64| us as f64 / 1000.0;
        TimingErrors {
            ttft_err_p50_ms: ms(ttft.value_at_quantile(0.5)),
            ttft_err_p99_ms: ms(ttft.value_at_quantile(0.99)),
            ttft_err_max_ms: ms(ttft.max()),
            interval_err_p50_ms: ms(gaps.value_at_quantile(0.5)),
            interval_err_p99_ms: ms(gaps.value_at_quantile(0.99)),
            interval_err_max_ms: ms(gaps.max()),
        }
    }
}
