//! One connection of a bus step: a subscriber that connects, says hello, waits until the
//! bus says it is subscribed and then reads every frame for stamps; or a publisher that
//! connects, waits for the go and writes its stamped messages at its rate. What they
//! share of the run is a [`Ctx`]; what each saw is a [`Done`]. Adding them up is
//! `report`'s business.

use super::tally::{self, Seen};
use crate::framed::{self, Reader, Writer};
use crate::hist::hist;
use crate::run::{Failure, Progress};
use crate::spec::{BusSpec, Role};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use tokio::sync::{mpsc, watch};
use tokio::time::{Duration, Instant};

/// What every connection of the run shares.
pub(super) struct Ctx {
    pub spec: BusSpec,
    pub address: String,
    pub port: String,
    pub allow_remote: bool,
    pub tag: u32,
    /// What this run's stamps begin with.
    pub head: Vec<u8>,
    pub epoch: Instant,
    /// New distinct deliveries so far (to stop waiting once all are in).
    pub fresh: AtomicU64,
    pub first_publish: AtomicU64,
    pub last_publish: AtomicU64,
    pub last_delivery: AtomicU64,
    pub progress: Arc<Progress>,
}

impl Ctx {
    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    fn fill(&self, t: &str, role: &Role, name: &str, index: usize, stamp: &str) -> Vec<u8> {
        let index = index.to_string();
        let vars = [
            ("session", name),
            ("index", index.as_str()),
            ("stamp", stamp),
            ("port", self.port.as_str()),
            ("role", role.name.as_str()),
        ];
        crate::template::render(t, &vars).into_bytes()
    }
}

/// One connection's end.
pub(super) struct Done {
    pub name: String,
    pub seen: Option<Seen>,
    pub delivery_us: Histogram<u64>,
    pub published: Option<(u32, u64)>,
    pub error: Option<Failure>,
}

async fn hello(
    ctx: &Ctx,
    role: &Role,
    name: &str,
    index: usize,
) -> Result<(Reader, Writer), Failure> {
    let s = &ctx.spec;
    let (r, mut w) = framed::open(s.transport, s.framing, &ctx.address, ctx.allow_remote).await?;
    for h in &role.hello {
        w.send(&ctx.fill(h, role, name, index, "")).await?;
    }
    Ok((r, w))
}

async fn wait_ready(ctx: &Ctx, r: &mut Reader, want: &str) -> Result<(), Failure> {
    let deadline = Duration::from_millis(ctx.spec.ready_timeout_ms);
    let look = async {
        loop {
            match r.next().await? {
                None => {
                    return Err(Failure::new(
                        "protocol",
                        format!("the bus closed the connection before {want:?} came back"),
                    ))
                }
                Some(f) if f.windows(want.len()).any(|w| w == want.as_bytes()) => return Ok(()),
                Some(_) => {}
            }
        }
    };
    tokio::time::timeout(deadline, look).await.map_err(|_| {
        Failure::new(
            "timeout",
            format!(
                "no frame containing {want:?} within ready_timeout_ms = {} after connecting",
                ctx.spec.ready_timeout_ms
            ),
        )
    })?
}

pub(super) async fn subscriber(
    ctx: Arc<Ctx>,
    role: usize,
    index: usize,
    ready: mpsc::UnboundedSender<bool>,
    mut stop: watch::Receiver<bool>,
) -> Done {
    let r = &ctx.spec.roles[role];
    let name = format!("{}-{index}", r.name);
    let mut done = Done {
        name: name.clone(),
        seen: Some(Seen::default()),
        delivery_us: hist(),
        published: None,
        error: None,
    };
    let opened = async {
        let (mut rd, w) = hello(&ctx, r, &name, index).await?;
        if let Some(want) = &r.ready {
            wait_ready(&ctx, &mut rd, want).await?;
        }
        Ok::<_, Failure>((rd, w))
    };
    let (mut rd, _w) = match opened.await {
        Ok(x) => x,
        Err(e) => {
            // Never subscribed: its failure is the connection's, not messages the bus
            // lost, so it expects none.
            let _ = ready.send(false);
            done.seen = None;
            done.error = Some(e);
            return done;
        }
    };
    let _ = ready.send(true);
    let seen = done.seen.as_mut().expect("set above");
    let mut frames = 0u64;
    loop {
        let frame = tokio::select! {
            _ = stop.changed() => break,
            f = rd.next() => f,
        };
        match frame {
            Ok(Some(f)) => {
                frames += 1;
                let now = ctx.now_us();
                for s in tally::scan_for(&f, &ctx.head) {
                    if let Some(us) = seen.take(s, now) {
                        let _ = done.delivery_us.record(us);
                        ctx.fresh.fetch_add(1, Relaxed);
                        ctx.progress.turns.fetch_add(1, Relaxed);
                        ctx.last_delivery.fetch_max(now, Relaxed);
                    }
                }
            }
            Ok(None) => {
                done.error = Some(Failure::new(
                    "closed",
                    format!(
                        "the bus closed {name}'s connection after {}",
                        result::words::count(frames, "frame")
                    ),
                ));
                break;
            }
            Err(e) => {
                done.error = Some(e);
                break;
            }
        }
    }
    done
}

/// The signals a publisher waits for and gives.
pub(super) struct Cue {
    pub ready: mpsc::UnboundedSender<bool>,
    pub go: watch::Receiver<bool>,
    /// Its messages written (sent once, when it has written all it will).
    pub wrote: mpsc::UnboundedSender<u64>,
    pub stop: watch::Receiver<bool>,
}

pub(super) async fn publisher(
    ctx: Arc<Ctx>,
    role: usize,
    index: usize,
    id: u32,
    mut cue: Cue,
) -> Done {
    let r = &ctx.spec.roles[role];
    let name = format!("{}-{index}", r.name);
    let mut done = Done {
        name: name.clone(),
        seen: None,
        delivery_us: hist(),
        published: Some((id, 0)),
        error: None,
    };
    let (mut rd, mut w) = match hello(&ctx, r, &name, index).await {
        Ok(x) => x,
        Err(e) => {
            let _ = cue.ready.send(false);
            let _ = cue.wrote.send(0);
            done.error = Some(e);
            return done;
        }
    };
    let _ = cue.ready.send(true);
    // Whatever the bus answers a publisher (acknowledgements, counts) is read and dropped.
    let drain = tokio::spawn(async move { while let Ok(Some(_)) = rd.next().await {} });
    let closed = |drain: &tokio::task::JoinHandle<()>, wrote: u64| {
        drain.is_finished().then(|| {
            Failure::new("closed", format!(
                    "the bus closed {name}'s connection while it published (after it had written {})",
                    result::words::count(wrote, "message")
                ))
        })
    };
    let _ = cue.go.wait_for(|g| *g).await;
    let start = Instant::now();
    let n = ctx.spec.messages;
    for seq in 0..n {
        if ctx.spec.rate > 0.0 {
            tokio::time::sleep_until(start + Duration::from_secs_f64(seq as f64 / ctx.spec.rate))
                .await;
        }
        let sent = ctx.now_us();
        let stamp = tally::stamp(ctx.tag, id, seq, sent);
        let frame = ctx.fill(&r.send, r, &name, index, &stamp);
        if let Err(f) = w.send(&frame).await {
            done.error = Some(f.said(|m| {
                format!(
                    "{name} could send {seq} of {}: {m}",
                    result::words::count(n as u64, "message")
                )
            }));
            break;
        }
        ctx.first_publish.fetch_min(sent, Relaxed);
        ctx.last_publish.fetch_max(sent, Relaxed);
        done.published = Some((id, seq as u64 + 1));
    }
    let _ = cue.wrote.send(done.published.map_or(0, |p| p.1));
    // Open until the subscribers are done: a bus may drop what a closed connection sent
    // and it had not read yet (Redis does).
    let _ = cue.stop.wait_for(|s| *s).await;
    if done.error.is_none() {
        done.error = closed(&drain, done.published.map_or(0, |p| p.1));
    }
    drop(w);
    drain.abort();
    done
}
