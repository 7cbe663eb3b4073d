//! The shape of a ladder: the knee, a Universal Scalability Law fit,
//! and a capacity projection — each with how it was computed and when it cannot be.

use result::ladder::SessionCost;
pub use result::ladder::{Capacity, Knee, Usl, UslRefusal};
use result::Confidence;

/// One step as the analysis sees it.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub concurrency: f64,
    /// Latency inflation (p50 session time / ideal).
    pub inflation: f64,
    /// Completed turns per second.
    pub throughput: f64,
}

/// Kneedle (Satopää et al. 2011) on latency inflation against log2(concurrency) (ladders
/// grow by doubling): normalise both to [0, 1]; for a convex rising curve the knee is
/// where x − y is largest (the curve leaves the diagonal most). Needs 3 points. The answer is the interval between
/// the knee's level and the one before it, since the data has nothing in between.
pub fn knee(points: &[Point]) -> Knee {
    let method = Some(result::facts::KneeMethod::LatencyKneedle);
    if points.len() < 3 {
        let c = points.last().map_or(0.0, |p| p.concurrency);
        return Knee {
            from: c,
            to: c,
            confidence: Confidence::Insufficient,
            method,
        };
    }
    let lx = |p: &Point| p.concurrency.max(1e-9).log2();
    let (x0, x1) = (lx(&points[0]), lx(&points[points.len() - 1]));
    let ys: Vec<f64> = points.iter().map(|p| p.inflation).collect();
    let (y0, y1) = (
        ys.iter().cloned().fold(f64::INFINITY, f64::min),
        ys.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    // Normalising a nearly flat curve would blow noise up into a "knee".
    if y1 < y0 * 1.15 || (x1 - x0) < 1e-9 {
        let last = points[points.len() - 1].concurrency;
        return Knee {
            from: last,
            to: last,
            confidence: Confidence::Flat,
            method,
        };
    }
    let mut best = (0usize, f64::NEG_INFINITY);
    for (i, p) in points.iter().enumerate() {
        let d = (lx(p) - x0) / (x1 - x0) - (p.inflation - y0) / (y1 - y0);
        if d > best.1 {
            best = (i, d);
        }
    }
    let (i, d) = best;
    // The knee is the last level before latency turns up: between it and the next one.
    let to = points
        .get(i + 1)
        .map_or(points[i].concurrency, |p| p.concurrency);
    let confidence = if i + 1 >= points.len() - 1 {
        Confidence::AtTheEnd
    } else if d >= 0.2 {
        Confidence::Clear
    } else {
        Confidence::Weak
    };
    Knee {
        from: points[i].concurrency,
        to,
        confidence,
        method,
    }
}

/// Fits X(N) = λN / (1 + σ(N−1) + κN(N−1)) by least squares on its linear form
/// N/X = a + b(N−1) + cN(N−1) (a = 1/λ, b = σ/λ, c = κ/λ). Refuses with fewer than 4
/// points: three parameters need more points than that to mean anything.
pub fn usl(points: &[Point]) -> Result<Usl, UslRefusal> {
    let pts: Vec<&Point> = points
        .iter()
        .filter(|p| p.throughput > 0.0 && p.concurrency > 0.0)
        .collect();
    if pts.len() < 4 {
        return Err(UslRefusal::TooFewSteps { steps: pts.len() });
    }
    // Normal equations for 3 unknowns.
    let mut ata = [[0.0f64; 3]; 3];
    let mut atb = [0.0f64; 3];
    for p in &pts {
        let n = p.concurrency;
        let row = [1.0, n - 1.0, n * (n - 1.0)];
        let y = n / p.throughput;
        for i in 0..3 {
            for j in 0..3 {
                ata[i][j] += row[i] * row[j];
            }
            atb[i] += row[i] * y;
        }
    }
    let [a, b, c] = solve3(ata, atb).ok_or(UslRefusal::Undetermined)?;
    if a <= 0.0 {
        return Err(UslRefusal::NonPositive);
    }
    let lambda = 1.0 / a;
    let (sigma, kappa) = ((b / a).max(0.0), (c / a).max(0.0));
    let model = |n: f64| lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    let mean = pts.iter().map(|p| p.throughput).sum::<f64>() / pts.len() as f64;
    let ss_tot: f64 = pts.iter().map(|p| (p.throughput - mean).powi(2)).sum();
    let ss_res: f64 = pts
        .iter()
        .map(|p| (p.throughput - model(p.concurrency)).powi(2))
        .sum();
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        0.0
    };
    let peak = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    Ok(Usl {
        lambda,
        sigma,
        kappa,
        peak_concurrency: peak,
        peak_throughput: peak.map(model),
        r2,
        points: pts.len(),
        note: None,
    })
}

fn solve3(mut m: [[f64; 3]; 3], mut v: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[piv][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, piv);
        v.swap(col, piv);
        for r in 0..3 {
            if r != col {
                let f = m[r][col] / m[col][col];
                let pivot_row = m[col];
                for (x, p) in m[r].iter_mut().zip(pivot_row) {
                    *x -= f * p;
                }
                v[r] -= f * v[col];
            }
        }
    }
    Some([v[0] / m[0][0], v[1] / m[1][1], v[2] / m[2][2]])
}

/// Projects sessions per host from the marginal cost per session measured at the
/// ceiling step (its memory by PSS where it was read, RSS else). A projection, never a
/// measurement: it assumes cost stays linear beyond what was measured and that a share of
/// the host is usable (`Capacity::USABLE`).
pub fn capacity(
    mem_kb_per_session: f64,
    cpu_ms_per_turn: f64,
    turns_per_session_per_s: f64,
    host_mem_gb: f64,
    host_cpus: f64,
    target: Option<u64>,
) -> Capacity {
    let per_session = SessionCost {
        mem_kb: mem_kb_per_session,
        cpu_ms_per_turn,
        turns_per_s: turns_per_session_per_s,
    };
    let host = Capacity {
        host_mem_gb,
        host_cpus,
        ..Capacity::default()
    };
    let by_mem = if per_session.mem_kb > 0.0 {
        host.usable_mem_kb() / per_session.mem_kb
    } else {
        f64::INFINITY
    };
    let by_cpu = if per_session.cpu_ms_per_s() > 0.0 {
        host.usable_cpu_ms_per_s() / per_session.cpu_ms_per_s()
    } else {
        f64::INFINITY
    };
    let per_host = by_mem.min(by_cpu).floor();
    // No host count where nothing measured bounds a host: dividing by no bound says 0.
    let hosts = target.filter(|_| per_host.is_finite()).map(|t| {
        if per_host >= 1.0 {
            (t as f64 / per_host).ceil() as u64
        } else {
            u64::MAX
        }
    });
    Capacity {
        sessions_per_host_by_memory: by_mem,
        sessions_per_host_by_cpu: by_cpu,
        sessions_per_host: per_host,
        target,
        hosts,
        per_session: Some(per_session),
        ..host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(xs: &[(f64, f64, f64)]) -> Vec<Point> {
        xs.iter()
            .map(|&(c, i, t)| Point {
                concurrency: c,
                inflation: i,
                throughput: t,
            })
            .collect()
    }

    #[test]
    fn knee_is_found_where_latency_turns() {
        let p = pts(&[
            (10.0, 1.0, 0.0),
            (20.0, 1.02, 0.0),
            (40.0, 1.05, 0.0),
            (80.0, 1.3, 0.0),
            (160.0, 3.0, 0.0),
        ]);
        let k = knee(&p);
        assert_eq!(
            (k.from, k.to, k.confidence),
            (80.0, 160.0, Confidence::AtTheEnd)
        );
        let p = pts(&[
            (10.0, 1.0, 0.0),
            (20.0, 1.01, 0.0),
            (40.0, 1.02, 0.0),
            (80.0, 2.5, 0.0),
            (160.0, 2.9, 0.0),
            (320.0, 3.0, 0.0),
        ]);
        let k = knee(&p);
        assert_eq!(
            (k.from, k.to, k.confidence),
            (40.0, 80.0, Confidence::Clear)
        );
        assert_eq!(knee(&p[..2]).confidence, Confidence::Insufficient);
        let flat = pts(&[
            (16.0, 1.01, 0.0),
            (32.0, 1.0, 0.0),
            (64.0, 1.02, 0.0),
            (128.0, 1.05, 0.0),
        ]);
        assert_eq!(knee(&flat).confidence, Confidence::Flat);
    }

    #[test]
    fn usl_recovers_known_parameters() {
        let (l, s, k) = (100.0, 0.05, 0.001);
        let p: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
            .iter()
            .map(|&n| Point {
                concurrency: n,
                inflation: 1.0,
                throughput: l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0)),
            })
            .collect();
        let u = usl(&p).unwrap();
        assert!(
            (u.lambda - l).abs() < 1e-6 && (u.sigma - s).abs() < 1e-9 && (u.kappa - k).abs() < 1e-9,
            "{u:?}"
        );
        assert!((u.peak_concurrency.unwrap() - ((1.0 - s) / k).sqrt()).abs() < 1e-6);
        assert!(u.r2 > 0.999);
        assert_eq!(
            usl(&p[..3]).unwrap_err(),
            UslRefusal::TooFewSteps { steps: 3 }
        );
    }

    #[test]
    fn capacity_shows_its_arithmetic() {
        let c = capacity(100.0, 2.0, 0.5, 64.0, 16.0, Some(100_000));
        assert_eq!(c.sessions_per_host_by_memory.floor(), 536_870.0);
        assert_eq!(c.sessions_per_host_by_cpu.floor(), 12_800.0);
        assert_eq!((c.sessions_per_host, c.hosts), (12_800.0, Some(8)));
        // What it stores is what its working says.
        let w = words::capacity::working(&c);
        assert_eq!(
            w[0],
            "memory: 64 GB × 80 % usable = 53,687,091 KB / 100.0 KB per session = 536,870 sessions"
        );
        assert!(w[1].starts_with("CPU: 2.00 ms per turn × 0.500 turns per session per second = 1.000 ms/s per session"), "{}", w[1]);
        assert_eq!(
            w[3],
            "hosts for 100,000 sessions = ceil(100,000 / 12,800) = 8"
        );
    }

    /// A session whose CPU rounds to nothing bounds a host by memory alone; one that
    /// costs nothing measurable of either sizes no host at all (not 0 hosts).
    #[test]
    fn capacity_without_a_measurable_cost_sizes_no_host() {
        let by_mem = capacity(100.0, 0.0, 0.5, 64.0, 16.0, Some(100_000));
        assert!(by_mem.sessions_per_host_by_cpu.is_infinite());
        assert_eq!(
            (by_mem.sessions_per_host, by_mem.hosts),
            (536_870.0, Some(1))
        );
        let free = capacity(0.0, 0.0, 0.5, 64.0, 16.0, Some(100_000));
        assert!(free.sessions_per_host.is_infinite());
        assert_eq!(free.hosts, None);
    }
}
