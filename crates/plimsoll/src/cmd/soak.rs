//! `plimsoll soak`: one SUT under steady load for a long time, then a drain; a leak
//! verdict per resource.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct SoakArgs {
    /// The experiment file (paths in it count from its directory).
    #[arg(long, default_value = "plimsoll.toml")]
    pub config: PathBuf,
    /// Sessions at a time (overrides [step] concurrency); each slot starts a new session as soon as its last ends.
    #[arg(long, short = 'c')]
    pub concurrency: Option<usize>,
    /// Open model instead: new sessions arrive at this rate per second for the duration.
    #[arg(long)]
    pub rate: Option<f64>,
    /// How long the load runs, e.g. 90s, 30m, 2h.
    #[arg(long, default_value = "10m")]
    pub duration: String,
    /// Then this long with no load, to see whether memory comes back, e.g. 5m.
    #[arg(long, default_value = "2m")]
    pub drain: String,
    /// Sample the SUT (RSS, threads, open files, CPU, cgroup memory) this often.
    #[arg(long, default_value = "2s")]
    pub every: String,
    /// Leave the start of the load out of the verdict: a time (1m) or a share of the duration (20%).
    #[arg(long, default_value = "20%")]
    pub warmup: String,
    /// Turns a session (overrides the session file's turns): long sessions, whose memory per turn RESULT reports.
    #[arg(long, value_name = "N")]
    pub session_turns: Option<u32>,
    /// Let Plimsoll and the SUT share every core.
    #[arg(long)]
    pub no_partition: bool,
    /// Directory for soak.json, soak.md and soak.html.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Allow session URLs that are not loopback (load goes only to 127.0.0.1 otherwise).
    #[arg(long)]
    pub allow_remote: bool,
    /// The history database the soak and its series are recorded in (as it goes).
    #[arg(long, default_value = ".plimsoll/history.db")]
    pub history: PathBuf,
    /// Do not record this soak.
    #[arg(long)]
    pub no_history: bool,
    /// Print the whole soak document on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub load: super::LoadArgs,
    #[command(flatten)]
    pub cap: super::CapArgs,
    #[command(flatten)]
    pub live: super::live::LiveArgs,
}

/// `90s`, `30m`, `2h`, `1h30m`, or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration: write e.g. 90s, 30m, 2h or 1h30m");
    let t = s.trim();
    if let Ok(secs) = t.parse::<f64>() {
        return (secs > 0.0 && secs.is_finite())
            .then(|| Duration::from_secs_f64(secs))
            .ok_or_else(bad);
    }
    let (mut total, mut num) = (0.0, String::new());
    for c in t.chars() {
        match c {
            '0'..='9' | '.' => num.push(c),
            'h' | 'm' | 's' => {
                let v: f64 = num.parse().map_err(|_| bad())?;
                total += v * match c {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                num.clear();
            }
            _ => return Err(bad()),
        }
    }
    if !num.is_empty() || total <= 0.0 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(total))
}

/// --duration, --drain, --every and --warmup (a time, or a share of the duration).
fn times(a: &SoakArgs) -> anyhow::Result<(Duration, Duration, Duration, Duration)> {
    let arg = |name: &str, v: &str| parse_duration(v).map_err(|e| anyhow::anyhow!("--{name} {e}"));
    let duration = arg("duration", &a.duration)?;
    let drain = arg("drain", &a.drain)?;
    let every = arg("every", &a.every)?;
    let warmup = match a.warmup.strip_suffix('%') {
        Some(p) => {
            let share: f64 = p.trim().parse().map_err(|_| {
                anyhow::anyhow!(
                    "--warmup {:?}: write a share such as 20% or a time such as 1m",
                    a.warmup
                )
            })?;
            if !(0.0..100.0).contains(&share) {
                anyhow::bail!("--warmup {}: a share from 0% to below 100%", a.warmup);
            }
            duration.mul_f64(share / 100.0)
        }
        None => arg("warmup", &a.warmup)?,
    };
    if warmup >= duration {
        anyhow::bail!(
            "--warmup {} leaves nothing of the {} load to judge",
            a.warmup,
            a.duration
        );
    }
    Ok((duration, drain, every, warmup))
}

/// The live view of the soak, when `--live` or `--otlp` asks for one: its step feeds it
/// each second, its samples each time one is taken.
fn watched(
    a: &SoakArgs,
    rt: &tokio::runtime::Runtime,
    cfg: &experiment::Config,
    unit: result::words::Unit,
    opts: &mut ::soak::SoakOptions,
) -> anyhow::Result<Option<super::live::Live>> {
    let name = a.config.display().to_string();
    let live = a.live.start(
        rt,
        super::live::Named {
            run: &name,
            config: &name,
            unit,
            budget: &cfg.budget,
            cap: opts.step.cap.as_ref().map(|c| c.cpus),
        },
    )?;
    if let Some(l) = &live {
        opts.step.on_tick = Some(l.begin(opts.step.concurrency.unwrap_or(cfg.concurrency)));
        opts.live = Some(l.board.clone());
    }
    Ok(live)
}

pub fn run(a: SoakArgs) -> anyhow::Result<u8> {
    super::guard_up();
    let cfg = experiment::Config::load(&a.config)?;
    let (duration, drain, every, warmup) = times(&a)?;
    let cap = a.cap.spec()?;
    // Open model: the sessions that arrive over the whole duration.
    let concurrency = match a.rate {
        Some(r) if r > 0.0 => Some((r * duration.as_secs_f64()).ceil().max(1.0) as usize),
        Some(r) => anyhow::bail!("--rate {r}: sessions arrive at a positive rate"),
        None => a.concurrency,
    };
    let opts = ::soak::SoakOptions {
        step: step::StepOptions {
            concurrency,
            rate: a.rate,
            allow_remote: a.allow_remote,
            cap,
            partition: super::partition(!a.no_partition),
            session: a.load.session.clone(),
            keep_audio_dir: a.load.keep_audio.clone(),
            probe_path: a.load.probe.clone(),
            turns: a.session_turns,
            slow: a.load.slow(),
            ..Default::default()
        },
        duration,
        drain,
        every,
        warmup,
        history: (!a.no_history).then_some(a.history.clone()),
        out: a.out.clone(),
        live: None,
    };
    // Every file the soak needs read before its first line: a bad one costs nothing.
    let what = step::preflight(&cfg, &opts.step)?;
    eprintln!(
        "plimsoll soak: {} of load ({}), then {} of drain, sampling every {}; the first {:.0} s left out of the verdict",
        a.duration,
        match a.rate {
            Some(r) => format!("{} a second", result::words::count_f(r, "new session")),
            None => format!(
                "{} at a time, each replaced as it ends",
                result::words::sessions(opts.step.concurrency.unwrap_or(cfg.concurrency) as f64)
            ),
        },
        a.drain,
        a.every,
        warmup.as_secs_f64()
    );
    let rt = super::runtime()?;
    let mut opts = opts;
    let live = watched(&a, &rt, &cfg, what.unit, &mut opts)?;
    let doc = rt.block_on(::soak::run_soak(&cfg, &opts))?;
    eprintln!("\nverdict: {}", words::soak::headline(&doc.analysis));
    if a.json {
        println!("{}", words::json::soak(&doc));
    }
    if let Some(l) = live {
        l.finish(&rt, &[]);
    }
    let leak = doc
        .analysis
        .leaks
        .iter()
        .any(|l| l.verdict == result::soak::LeakVerdict::Leak);
    let failed = doc.result.as_ref().is_some_and(|r| !r.outcome.is_ok());
    Ok(if failed {
        3
    } else if leak {
        2
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("0.5s"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("10 minutes")
            .unwrap_err()
            .contains("write e.g. 90s"));
        assert!(
            parse_duration("5x").is_err()
                && parse_duration("0s").is_err()
                && parse_duration("3").is_ok()
        );
    }
}
