//! The charts of a ladder's report, each a measure against concurrency (a ladder of voice
//! calls has its own: response latency, broken audio, the loop's lag): throughput (with
//! the USL fit), latency inflation (with the budget), CPU of its cap, session latency,
//! memory, memory per session, threads, CPU per turn; connections and the provider's
//! pushback when there are any; open files, other processes on the SUT's cores and the
//! run-queue wait for runs that measured them. Lines fitted to what grows per session
//! are drawn dashed over their figures.

use crate::svg::{chart, Chart, Marks, Series};
use result::ladder::{FitFigure, LadderAnalysis, LadderDoc, UslReading};
use result::Connection;
use result::StepResult;
use std::fmt::Write;

/// A growth fit drawn over the levels, when the verdict fitted that figure.
fn fitted(a: &LadderAnalysis, figure: FitFigure, xs: &[f64]) -> Option<Vec<(f64, f64)>> {
    let f = a
        .verdict
        .as_ref()?
        .growth
        .iter()
        .find(|g| g.figure == figure)?;
    Some(xs.iter().map(|&x| (x, f.intercept + f.slope * x)).collect())
}

/// Every chart, rendered.
pub(crate) fn ladder(
    doc: &LadderDoc,
    a: &LadderAnalysis,
    (xs, counts): (&[f64], &[u64]),
    marks: &Marks,
) -> String {
    let steps = &doc.steps;
    let get =
        |f: fn(&StepResult) -> Option<f64>| -> Vec<Option<f64>> { steps.iter().map(f).collect() };
    let xs = xs.to_vec();
    let throughput: Vec<Option<f64>> = steps.iter().map(crate::table::turns_per_s).collect();
    let cpu = get(|s| s.cpu_of_cap.map(|c| c * 100.0));
    let usl_curve = usl_curve(&a.usl, &xs);
    let budget = doc
        .budget()
        .and_then(|b| b.latency_inflation)
        .map(|v| (v, "budget"));
    let mut charts = if result::words::Unit::of(steps).is_calls() {
        call_charts(doc)
    } else {
        vec![
        Chart { title: "Throughput", unit: "turns/s", how: "Completed turns per second. Where it stops growing is the wall; the dashed line is the Universal Scalability Law fit (4 or more steps).", series: vec![Series { name: "measured", color: "#36c", values: throughput }], curve: usl_curve, limit: None },
        Chart { title: "Latency inflation", unit: "× ideal", how: "1.0 means sessions took as long as the mock's own generation time; the red line is the budget.", series: vec![Series { name: "p50", color: "#36c", values: get(|s| s.latency_inflation) }], curve: None, limit: budget },
        Chart { title: "CPU of its cap", unit: "%", how: "The SUT's CPU over the cores it could use (its cap, or its part of the machine); 100 % is the wall.", series: vec![Series { name: "CPU", color: "#c63", values: cpu }], curve: None, limit: Some((100.0, "cap")) },
        Chart { title: "Session latency", unit: "ms", how: "Whole-session time, median and 99th percentile; a widening gap is queueing in the system under test.", series: vec![Series { name: "p50", color: "#36c", values: get(|s| s.p50_session_ms) }, Series { name: "p99", color: "#c33", values: get(|s| s.p99_session_ms) }], curve: None, limit: None },
        Chart { title: "Peak RSS", unit: "MB", how: "The whole process tree's resident memory at its highest during the step.", series: vec![Series { name: "peak", color: "#639", values: get(|s| Some(s.peak_rss_mb)) }], curve: None, limit: None },
        Chart { title: "Memory per session", unit: "KB", how: "(peak − baseline) / sessions, by PSS where it was read (each shared page counted once), RSS else: the marginal cost of one more session; flat is healthy.", series: vec![Series { name: "KB/session", color: "#963", values: get(|s| Some(s.memory().1 * 1024.0)) }], curve: fitted(a, FitFigure::KbPerSession, &xs), limit: None },
        Chart { title: "OS threads", unit: "threads", how: "Peak OS threads (not green threads); growth with sessions means a thread per session.", series: vec![Series { name: "peak", color: "#396", values: get(|s| Some(s.peak_threads as f64)) }], curve: fitted(a, FitFigure::Threads, &xs), limit: None },
        Chart { title: "CPU per turn", unit: "ms", how: "The system under test's CPU time per completed turn.", series: vec![Series { name: "CPU ms/turn", color: "#c63", values: get(|s| s.cpu_ms_per_turn) }], curve: fitted(a, FitFigure::CpuMsPerTurn, &xs), limit: None },
    ]
    };
    let peers = peers(steps);
    if !peers.is_empty() {
        let series = peers
            .iter()
            .enumerate()
            .map(|(i, p)| Series {
                name: p,
                color: ["#36c", "#c33", "#393", "#e70", "#639", "#099"][i % 6],
                values: steps.iter().map(|s| peak_to(s, p)).collect(),
            })
            .collect();
        charts.push(Chart { title: "Connections", unit: "peak", how: "The SUT's established connections to each peer (the mock, a [[service]], a port) at their most. A line that stays flat while sessions grow, with throughput flat too, is a pool every turn waits for.", series, curve: None, limit: None });
    }
    if steps.iter().any(|s| s.provider.is_some()) {
        let share = |k: fn(&result::Provider) -> f64| -> Vec<Option<f64>> {
            steps
                .iter()
                .map(|s| s.provider.as_ref().map(|p| k(p) * 100.0))
                .collect()
        };
        charts.push(Chart { title: "Provider pushback", unit: "%", how: "LLM calls the provider's quotas or full queue refused, as a share of all calls; and time calls waited for a generation slot, as a share of the provider's time. Rising from zero: the provider is the wall.", series: vec![Series { name: "refused", color: "#c33", values: share(|p| p.refused_share) }, Series { name: "waiting", color: "#e70", values: share(|p| p.queue_share) }], curve: None, limit: None });
    }
    charts.extend(crate::cost::charts(steps));
    charts.extend(measured_since(doc, a, &xs));
    // The wall's own chart first: the evidence for the headline.
    let mut body = crate::wall_charts::sections(doc, a, (&xs, counts), marks);
    for c in &charts {
        let _ = write!(body, "<section>{}</section>", chart(c, &xs, counts, marks));
    }
    body
}

/// A ladder of voice calls, charted as callers hear it: how soon replies begin against
/// the budget, how much of the replies' time stalled, the event loop's lag beside the
/// calls; then the CPU, memory and threads every ladder shows, per call.
fn call_charts(doc: &LadderDoc) -> Vec<Chart<'_>> {
    let steps = &doc.steps;
    let voice = |f: fn(&result::VoiceCalls) -> Option<f64>| -> Vec<Option<f64>> {
        steps.iter().map(|s| s.voice.as_ref().and_then(f)).collect()
    };
    let budget = doc.budget();
    let response = budget
        .and_then(|b| b.response_p95_ms)
        .map(|v| (v, "budget"));
    let stalls = budget
        .and_then(|b| b.stall_share)
        .map(|v| (v * 100.0, "budget"));
    let get =
        |f: fn(&StepResult) -> Option<f64>| -> Vec<Option<f64>> { steps.iter().map(f).collect() };
    vec![
        Chart { title: "Response latency", unit: "ms", how: "From the end of the caller's speech to the bot's first audio, median and 95th percentile; the red line is the budget on the p95.", series: vec![Series { name: "p50", color: "#36c", values: voice(|v| v.response_p50_ms) }, Series { name: "p95", color: "#c33", values: voice(|v| v.response_p95_ms) }], curve: None, limit: response },
        Chart { title: "Broken audio", unit: "%", how: "Stalls: the caller's playback ran dry before the reply ended, as a share of the time the replies played; and the share of turns that stuttered at all. The red line is the budget on stalls.", series: vec![Series { name: "stalled audio", color: "#c33", values: voice(|v| Some(v.stall_share * 100.0)) }, Series { name: "turns that stuttered", color: "#e70", values: voice(|v| Some(v.stuttered_share * 100.0)) }], curve: None, limit: stalls },
        Chart { title: "Event-loop lag", unit: "ms", how: "The responsiveness probe's p99 beside the calls: how long a small request waited for the bot's loop. A loop that falls behind its frames shows here first.", series: vec![Series { name: "probe p99", color: "#639", values: get(|s| s.probe_p99_ms) }], curve: None, limit: None },
        Chart { title: "CPU of its cap", unit: "%", how: "The bot's CPU over the cores it could use (its cap, or its part of the machine); 100 % is the wall.", series: vec![Series { name: "CPU", color: "#c63", values: get(|s| s.cpu_of_cap.map(|c| c * 100.0)) }], curve: None, limit: Some((100.0, "cap")) },
        Chart { title: "Peak RSS", unit: "MB", how: "The bot's whole process tree's resident memory at its highest during the step.", series: vec![Series { name: "peak", color: "#639", values: get(|s| Some(s.peak_rss_mb)) }], curve: None, limit: None },
        Chart { title: "Memory per call", unit: "MB", how: "(peak − baseline) / calls, by PSS where it was read (each page a worker's processes share counted once), RSS else: what one more call costs; flat is healthy.", series: vec![Series { name: "MB/call", color: "#963", values: get(|s| Some(s.memory().1)) }], curve: None, limit: None },
        Chart { title: "OS threads", unit: "threads", how: "Peak OS threads; growth with calls means a thread per call.", series: vec![Series { name: "peak", color: "#396", values: get(|s| Some(s.peak_threads as f64)) }], curve: None, limit: None },
    ]
}

/// Charts of figures only newer runs measure: open files (when they grew), other
/// processes on the SUT's cores and the run-queue wait (when interference was read).
fn measured_since<'a>(doc: &'a LadderDoc, a: &LadderAnalysis, xs: &[f64]) -> Vec<Chart<'a>> {
    let steps = &doc.steps;
    let mut out = Vec::new();
    if let Some(curve) = fitted(a, FitFigure::OpenFiles, xs) {
        out.push(Chart { title: "Open files", unit: "fds", how: "Peak open descriptors of the SUT's processes; the dashed line is the fit per session.", series: vec![Series { name: "peak", color: "#099", values: steps.iter().map(|s| Some(s.peak_fds as f64)).collect() }], curve: Some(curve), limit: None });
    }
    if steps.iter().any(|s| s.interference.is_some()) {
        let others = steps
            .iter()
            .map(|s| analysis::quota::denied(s).map(|d| d * 100.0))
            .collect();
        out.push(Chart { title: "Other processes on the SUT's cores", unit: "% of its cores", how: "CPU that processes other than the SUT, its services and Plimsoll (and a hypervisor's steal) took on the SUT's cores during the span of load. From 10 % the step measured the machine as much as the SUT: it is run again and the verdict says so.", series: vec![Series { name: "others", color: "#c33", values: others }], curve: None, limit: Some((10.0, "busy")) });
        let wait = steps.iter().map(|s| s.sched_delay_ms_per_s).collect();
        out.push(Chart { title: "Run-queue wait", unit: "ms a second", how: "Time the SUT's threads spent runnable but waiting for a CPU, per second of driving: with other processes at zero and the CPU below its cap, more runnable threads than cores.", series: vec![Series { name: "wait", color: "#e70", values: wait }], curve: None, limit: None });
    }
    out
}

/// The fitted USL throughput over the measured range, for the throughput chart.
fn usl_curve(u: &UslReading, xs: &[f64]) -> Option<Vec<(f64, f64)>> {
    let UslReading::Fitted(u) = u else {
        return None;
    };
    let (l, sg, kp) = (u.lambda, u.sigma, u.kappa);
    let (lo, hi) = (
        xs.first().copied().unwrap_or(1.0),
        xs.last().copied().unwrap_or(1.0) * 1.5,
    );
    Some(
        (0..=60)
            .map(|i| {
                let n = lo * (hi / lo).powf(i as f64 / 60.0);
                (n, l * n / (1.0 + sg * (n - 1.0) + kp * n * (n - 1.0)))
            })
            .filter(|p| p.0 <= xs.last().copied().unwrap_or(1.0))
            .collect::<Vec<_>>(),
    )
}

/// Who the steps' connections went to ("mock", a service's name, ":5432"), in order of
/// first appearance.
pub(crate) fn peers(steps: &[StepResult]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in steps.iter().flat_map(|s| &s.connections) {
        let p = peer_of(c);
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

fn peer_of(c: &Connection) -> String {
    c.peer.clone().unwrap_or_else(|| format!(":{}", c.port))
}

/// A step's peak connections to a peer (None when it had none).
pub(crate) fn peak_to(step: &StepResult, peer: &str) -> Option<f64> {
    step.connections
        .iter()
        .find(|c| peer_of(c) == peer)
        .map(|c| c.peak as f64)
}
