//! The capacity projection's arithmetic, line by line, from what a session cost and the
//! host it is projected onto; a projection recorded before its inputs were kept says the
//! lines it was recorded with.

use result::ladder::{Capacity, SessionCost};
use result::words::int;

/// The working: memory, CPU, sessions per host, hosts for the target, the assumptions,
/// and the provider's bill where it was reckoned.
pub fn working(c: &Capacity) -> Vec<String> {
    let Some(s) = &c.per_session else {
        return c.recorded_working.clone();
    };
    let usable = crate::pct(Capacity::USABLE);
    let mut out = vec![memory(c, s, &usable), cpu(c, s, &usable)];
    out.push(match c.sessions_per_host.is_finite() {
        true => format!(
            "sessions per host = min(memory, CPU) = {}",
            big(c.sessions_per_host)
        ),
        false => format!("sessions per host: {UNBOUNDED}"),
    });
    if let (Some(t), Some(h)) = (c.target, c.hosts) {
        out.push(format!(
            "hosts for {} sessions = ceil({} / {}) = {}",
            int(t),
            int(t),
            big(c.sessions_per_host),
            int(h)
        ));
    }
    out.push(format!(
        "assumes: per-session cost stays as measured at the ceiling step (linear), {usable} of the host usable, the LLM provider is not the limit; a projection, not a measurement"
    ));
    if let (Some(b), Some(hour)) = (&c.bill, c.provider_bill_per_hour) {
        let sessions = c.target.map_or(c.sessions_per_host, |t| t as f64);
        out.push(format!(
            "provider's bill: {} {:.5} per turn × {:.3} turns per session per second × 3600 s × {sessions:.0} sessions = {} {hour:.2} per hour (prices of {}, cache as measured)",
            b.currency, b.per_turn, s.turns_per_s, b.currency, b.prices_date
        ));
    }
    out
}

/// Neither memory nor CPU bounds a host where a session cost none measurable of either.
const UNBOUNDED: &str = "not bounded: one session's memory and CPU were too small to measure, so no host size follows (project from a step with more sessions or longer turns)";

/// What one session's cost too small to measure leaves of a resource's line.
const NO_BOUND: &str = "too small to measure: sets no bound";

fn memory(c: &Capacity, s: &SessionCost, usable: &str) -> String {
    match c.sessions_per_host_by_memory.is_finite() {
        true => format!(
            "memory: {} GB × {usable} usable = {} KB / {:.1} KB per session = {} sessions",
            c.host_mem_gb,
            big(c.usable_mem_kb()),
            s.mem_kb,
            whole(c.sessions_per_host_by_memory)
        ),
        false => format!("memory: {:.1} KB per session, {NO_BOUND}", s.mem_kb),
    }
}

fn cpu(c: &Capacity, s: &SessionCost, usable: &str) -> String {
    let per_session = format!(
        "CPU: {:.2} ms per turn × {:.3} turns per session per second = {:.3} ms/s per session",
        s.cpu_ms_per_turn,
        s.turns_per_s,
        s.cpu_ms_per_s()
    );
    match c.sessions_per_host_by_cpu.is_finite() {
        true => format!(
            "{per_session}; {} cores × 1000 ms/s × {usable} = {} ms/s → {} sessions",
            c.host_cpus,
            big(c.usable_cpu_ms_per_s()),
            whole(c.sessions_per_host_by_cpu)
        ),
        false => format!("{per_session}, {NO_BOUND}"),
    }
}

/// Whole sessions, as many as fit (16,149.7 → 16,149): each resource's figure says what
/// `sessions per host`, their minimum, says.
fn whole(x: f64) -> String {
    big(x.floor())
}

/// A whole amount grouped by thousands (`374,727`), or as it is when not finite.
fn big(x: f64) -> String {
    match x.is_finite() && x >= 0.0 {
        true => int(x.round() as u64),
        false => format!("{x:.0}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::ladder::BillBasis;

    fn projected() -> Capacity {
        // 100 KB and 2 CPU ms a turn, 0.5 turns a second, onto 64 GB and 16 cores.
        Capacity {
            host_mem_gb: 64.0,
            host_cpus: 16.0,
            sessions_per_host_by_memory: 536_870.9,
            sessions_per_host_by_cpu: 12_800.0,
            sessions_per_host: 12_800.0,
            target: Some(100_000),
            hosts: Some(8),
            per_session: Some(SessionCost {
                mem_kb: 100.0,
                cpu_ms_per_turn: 2.0,
                turns_per_s: 0.5,
            }),
            ..Capacity::default()
        }
    }

    #[test]
    fn the_working_says_each_step_of_the_arithmetic() {
        let w = working(&projected());
        assert_eq!(
            w[..4],
            [
                "memory: 64 GB × 80 % usable = 53,687,091 KB / 100.0 KB per session = 536,870 sessions",
                "CPU: 2.00 ms per turn × 0.500 turns per session per second = 1.000 ms/s per session; 16 cores × 1000 ms/s × 80 % = 12,800 ms/s → 12,800 sessions",
                "sessions per host = min(memory, CPU) = 12,800",
                "hosts for 100,000 sessions = ceil(100,000 / 12,800) = 8",
            ]
        );
        assert!(w[4].starts_with("assumes: ") && w.len() == 5, "{w:?}");
        // A resource's sessions are whole, as the minimum says them: never 16,150 by CPU
        // beside 16,149 a host.
        let mut c = projected();
        (c.sessions_per_host_by_cpu, c.sessions_per_host) = (16_149.7, 16_149.0);
        let w = working(&c);
        assert!(w[1].ends_with("→ 16,149 sessions"), "{}", w[1]);
        assert_eq!(w[2], "sessions per host = min(memory, CPU) = 16,149");
    }

    /// A cost too small to measure sets no bound, said as such: never "inf sessions".
    #[test]
    fn a_cost_too_small_to_measure_is_said_as_no_bound() {
        let mut c = projected();
        c.per_session.as_mut().unwrap().cpu_ms_per_turn = 0.0;
        c.sessions_per_host_by_cpu = f64::INFINITY;
        c.sessions_per_host = 536_870.0;
        c.hosts = Some(1);
        let w = working(&c);
        assert_eq!(
            w[1],
            "CPU: 0.00 ms per turn × 0.500 turns per session per second = 0.000 ms/s per session, too small to measure: sets no bound"
        );
        assert_eq!(w[2], "sessions per host = min(memory, CPU) = 536,870");
        c.per_session.as_mut().unwrap().mem_kb = 0.0;
        c.sessions_per_host_by_memory = f64::INFINITY;
        c.sessions_per_host = f64::INFINITY;
        c.hosts = None;
        let w = working(&c);
        assert_eq!(
            w[0],
            "memory: 0.0 KB per session, too small to measure: sets no bound"
        );
        assert!(
            w[2].starts_with("sessions per host: not bounded: "),
            "{w:?}"
        );
        assert!(w[3].starts_with("assumes: "), "no hosts line: {w:?}");
        assert!(w.iter().all(|l| !l.contains("inf")), "{w:?}");
    }

    #[test]
    fn a_bill_reckoned_is_its_last_line_and_an_old_projection_keeps_its_words() {
        let mut c = projected();
        c.bill = Some(BillBasis {
            currency: "USD".into(),
            per_turn: 0.002,
            prices_date: "2026-11-24".into(),
        });
        c.provider_bill_per_hour = Some(360_000.0);
        assert_eq!(
            working(&c).pop().unwrap(),
            "provider's bill: USD 0.00200 per turn × 0.500 turns per session per second × 3600 s × 100000 sessions = USD 360000.00 per hour (prices of 2026-11-24, cache as measured)"
        );
        let old = Capacity {
            recorded_working: vec!["as it was said".into()],
            ..Capacity::default()
        };
        assert_eq!(working(&old), ["as it was said"]);
    }
}
