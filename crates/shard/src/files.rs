//! A shard's two files in its directory: `shard-I-of-N.hlog` (an HdrHistogram interval
//! log, one tagged interval per histogram, spanning the shard's driving) and
//! `shard-I-of-N.json` (its counters). Each is written to a temporary name and renamed,
//! so a shard killed halfway leaves no half file that a merge could take for a whole one.

use crate::counters::{Counters, FORMAT};
use anyhow::{bail, Context};
use base64::Engine;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// A shard as read back: where it came from, its counters and its histograms by tag.
#[derive(Clone, Debug)]
pub struct Shard {
    pub source: PathBuf,
    pub counters: Counters,
    pub hists: BTreeMap<String, Histogram<u64>>,
}

/// `shard-2-of-4`.
pub fn stem(index: usize, count: usize) -> String {
    format!("shard-{index}-of-{count}")
}

/// A tag the interval log can carry (no spaces, commas or line breaks).
fn tag_of(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            ' ' | ',' | '\r' | '\n' => '_',
            c => c,
        })
        .collect()
}

/// The interval log's text: one interval per histogram, from the shard's start for its
/// wall time, maxima in ms.
pub fn hlog(c: &Counters, hists: &BTreeMap<String, Histogram<u64>>) -> anyhow::Result<Vec<u8>> {
    let start = c.start_at_unix_ms.unwrap_or(0.0) / 1000.0;
    let mut buf = Vec::new();
    let mut ser = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    builder
        .add_comment(&format!(
            "plimsoll shard {} of {} (run {}), latencies in microseconds",
            c.index, c.count, c.run
        ))
        .with_max_value_divisor(1000.0);
    if start > 0.0 {
        let at = UNIX_EPOCH + Duration::from_secs_f64(start);
        builder.with_start_time(at).with_base_time(at);
    }
    let mut w = builder.begin_log_with(&mut buf, &mut ser)?;
    let from = Duration::from_secs_f64(c.late_start_ms.max(0.0) / 1000.0);
    let wall = Duration::from_secs_f64(c.wall_ms.max(0.0) / 1000.0);
    for (name, h) in hists {
        let tag = tag_of(name);
        w.write_histogram(h, from, wall, Tag::new(&tag))
            .map_err(|e| anyhow::anyhow!("writing the {name} histogram: {e:?}"))?;
    }
    Ok(buf)
}

/// Writes the shard's two files into `dir` (made if missing); returns the counters' path.
pub fn write(
    dir: &Path,
    c: &Counters,
    hists: &BTreeMap<String, Histogram<u64>>,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("making {}", dir.display()))?;
    let base = dir.join(stem(c.index, c.count));
    let put = |ext: &str, bytes: &[u8]| -> anyhow::Result<PathBuf> {
        let path = base.with_extension(ext);
        let tmp = base.with_extension(format!("{ext}.part"));
        std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    };
    put("hlog", &hlog(c, hists)?)?;
    put("json", &serde_json::to_vec_pretty(c)?)
}

/// Reads an interval log's histograms, adding intervals of the same tag.
pub fn parse_hlog(text: &[u8]) -> Result<BTreeMap<String, Histogram<u64>>, String> {
    let mut out: BTreeMap<String, Histogram<u64>> = BTreeMap::new();
    for entry in IntervalLogIterator::new(text) {
        let LogEntry::Interval(h) = entry.map_err(|e| format!("not an interval log ({e:?})"))?
        else {
            continue;
        };
        let tag = h.tag().map(|t| t.as_str().to_string()).ok_or_else(|| {
            format!(
                "an interval at {:.3} s has no tag",
                h.start_timestamp().as_secs_f64()
            )
        })?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(h.encoded_histogram())
            .map_err(|e| format!("the {tag} histogram is not base64 ({e})"))?;
        let hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("the {tag} histogram does not decode ({e:?})"))?;
        match out.get_mut(&tag) {
            Some(have) => have
                .add(&hist)
                .map_err(|e| format!("the {tag} histograms do not add ({e:?})"))?,
            None => {
                let mut fresh = crate::hist();
                fresh
                    .add(&hist)
                    .map_err(|e| format!("the {tag} histogram is out of range ({e:?})"))?;
                out.insert(tag, fresh);
            }
        }
    }
    Ok(out)
}

/// One shard from its counters file and the interval log beside it.
pub fn read(json: &Path) -> anyhow::Result<Shard> {
    let text = std::fs::read(json).with_context(|| format!("reading {}", json.display()))?;
    let counters: Counters = serde_json::from_slice(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: not a shard's counters ({e}); it is written by `plimsoll run --shard`",
            json.display(),
            e.line()
        )
    })?;
    if !crate::counters::READS.contains(&counters.format) {
        bail!(
            "{}: format {} (this Plimsoll writes format {FORMAT} and reads 2 and 3); merge with the version that wrote it",
            json.display(),
            counters.format
        );
    }
    let log = json.with_extension("hlog");
    let bytes = std::fs::read(&log).with_context(|| {
        format!(
            "reading {} (every shard's counters come with its interval log)",
            log.display()
        )
    })?;
    let hists = parse_hlog(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", log.display()))?;
    Ok(Shard {
        source: json.to_path_buf(),
        counters,
        hists,
    })
}

/// Every shard in these directories (a file may be named too), in path order.
pub fn read_dirs(paths: &[PathBuf]) -> anyhow::Result<Vec<Shard>> {
    let mut jsons = Vec::new();
    for p in paths {
        if p.is_file() {
            jsons.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p).with_context(|| {
            format!(
                "reading {} (give the directories the shards wrote with --shard-dir)",
                p.display()
            )
        })?;
        for e in entries {
            let path = e?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with("shard-") && name.ends_with(".json") {
                jsons.push(path);
            }
        }
    }
    jsons.sort();
    if jsons.is_empty() {
        bail!(
            "no shard-I-of-N.json in {}: run the shards with `plimsoll run --shard I/N --shard-dir DIR` first",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    jsons.iter().map(|j| read(j)).collect()
}
