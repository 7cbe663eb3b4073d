//! A call's audio, kept for a person to listen to: what the caller said and every sample
//! of the bot's audio it received, written as WAV files when the call went wrong (or for
//! every call, when asked). The tape is made while the call runs (the bot's samples as
//! 16-bit integers, exactly as the line decoded them; the caller's words only as where
//! each began, since they are kept anyway) and written off the call's clock once it is
//! over. What all calls may hold at once is capped; a call past the cap stops recording
//! and its note says where it was cut.

use crate::run::keeper::Keeper;
use std::path::PathBuf;

/// One reply's start in what the caller heard.
struct ReplyMark {
    turn: u32,
    /// Its first sample in the heard audio, and when it arrived (ms into the call).
    at: usize,
    arrived_ms: u64,
}

/// One call's tape.
pub(crate) struct Tape<'k> {
    keeper: &'k Keeper,
    rate: u32,
    /// Every sample of the bot's audio the caller received, in order.
    heard: Vec<i16>,
    /// Samples the caller sent, and where each turn's words began among them.
    sent: u64,
    said: Vec<(usize, u64)>,
    replies: Vec<ReplyMark>,
    /// The turn being spoken or answered (0: the greeting).
    pub turn: u32,
    /// Bytes reserved from the keeper; where the recording stopped, if it did.
    held: usize,
    cut_ms: Option<u64>,
}

const CHUNK: usize = 64 << 10;

impl<'k> Tape<'k> {
    pub fn new(keeper: &'k Keeper, rate: u32) -> Tape<'k> {
        Tape {
            keeper,
            rate,
            heard: Vec::new(),
            sent: 0,
            said: Vec::new(),
            replies: Vec::new(),
            turn: 0,
            held: 0,
            cut_ms: None,
        }
    }

    /// Frames the caller sent: `n` samples.
    pub fn sent(&mut self, n: usize) {
        self.sent += n as u64;
    }

    /// Turn `i`'s words (counted from 0) begin `queued` samples from now.
    pub fn said(&mut self, i: usize, queued: usize) {
        self.said.push((i, self.sent + queued as u64));
    }

    /// Audio the caller received `at_ms` into the call; `reply` when a reply began in it.
    pub fn heard(&mut self, x: &[f32], at_ms: u64, reply: bool) {
        if self.cut_ms.is_some() {
            return;
        }
        let need = (self.heard.len() + x.len()) * 2;
        while self.held < need {
            if !self.keeper.reserve(CHUNK) {
                self.cut_ms = Some(at_ms);
                return;
            }
            self.held += CHUNK;
        }
        if reply {
            self.replies.push(ReplyMark {
                turn: self.turn,
                at: self.heard.len(),
                arrived_ms: at_ms,
            });
        }
        // The line decoded each sample as n / 32768: this is n again, exactly.
        self.heard.extend(
            x.iter()
                .map(|v| (v * 32768.0).round().clamp(-32768.0, 32767.0) as i16),
        );
    }

    /// The call is over: its files written when it is one to keep (their stem), the
    /// tape's memory given back either way.
    pub async fn keep(
        mut self,
        name: &str,
        went_wrong: Option<Kept<'_>>,
        words: &[(u32, String)],
        mouths: &[Vec<f32>],
        background: &crate::run::background::Background,
    ) -> Option<PathBuf> {
        let held = std::mem::take(&mut self.held);
        let keeper = self.keeper;
        let damaged = matches!(went_wrong, Some(Kept::Damaged(_))) && !keeper.how.all;
        let went_wrong = went_wrong.map(|k| match k {
            Kept::Failed(w) | Kept::Damaged(w) => w,
        });
        let out = match (went_wrong.is_some() || keeper.how.all)
            .then(|| keeper.admit(name, damaged))
            .flatten()
        {
            Some(()) => {
                let stem = keeper.how.dir.join(file_safe(name));
                let files = self.files(&file_safe(name), went_wrong, words, mouths);
                let at = stem.clone();
                let written = background.submit(move || write(&at, files)).await;
                match written {
                    Ok(Ok(())) => Some(stem),
                    _ => None,
                }
            }
            None => None,
        };
        keeper.release(held);
        out
    }

    /// The three files' contents: what was said, what was heard, and the note.
    fn files(
        &self,
        name: &str,
        went_wrong: Option<&str>,
        words: &[(u32, String)],
        mouths: &[Vec<f32>],
    ) -> [Vec<u8>; 3] {
        let mut sent = vec![0.0f32; self.sent as usize];
        for &(i, at) in &self.said {
            let from = (at as usize).min(sent.len());
            let w = mouths.get(i).map_or(&[][..], |m| &m[..]);
            let n = w.len().min(sent.len() - from);
            sent[from..from + n].copy_from_slice(&w[..n]);
        }
        let note = super::tape_note::note(&super::tape_note::Facts {
            name,
            rate: self.rate,
            sent: self.sent,
            heard: self.heard.len() as u64,
            said: &self.said,
            replies: &self
                .replies
                .iter()
                .map(|r| (r.turn, r.at as u64, r.arrived_ms))
                .collect::<Vec<_>>(),
            words,
            went_wrong,
            cut_ms: self.cut_ms,
            mouths: &mouths.iter().map(Vec::len).collect::<Vec<_>>(),
        });
        [
            voice::pcm::write_wav(&sent, self.rate),
            voice::pcm::write_wav_i16(&self.heard, self.rate),
            note.into_bytes(),
        ]
    }
}

/// The call's tape kept when it went wrong (or every call's is asked for); a failed
/// call's message then names what its caller heard.
pub(super) async fn keep(
    tape: Tape<'_>,
    name: &str,
    out: Result<(), crate::run::Failure>,
    found: &[(u32, super::words::Found)],
    mouths: &[Vec<f32>],
    tally: &crate::run::tally::Tally,
) -> Result<(), crate::run::Failure> {
    let damaged = damaged(found);
    let why = match (&out, &damaged) {
        (Err(f), _) => Some(Kept::Failed(&f.message)),
        (Ok(()), Some(d)) => Some(Kept::Damaged(d)),
        (Ok(()), None) => None,
    };
    let words: Vec<(u32, String)> = found.iter().map(|(t, f)| (*t, f.said())).collect();
    let kept = tape
        .keep(name, why, &words, mouths, &tally.background)
        .await;
    match (out, kept) {
        (Err(f), Some(stem)) => {
            Err(f.said(|m| format!("{m} (what its caller heard: {}.heard.wav)", stem.display())))
        }
        (out, _) => out,
    }
}

/// Why a call is kept: it failed, or (it did not) a reply of it was damaged.
pub(crate) enum Kept<'a> {
    Failed(&'a str),
    Damaged(&'a str),
}

/// Why a call that did not fail is kept all the same: the first reply it heard that
/// was not the mock's voice, or was its own only by its sound (a pipeline damaged its
/// words past reading): audio to listen to for what damaged it.
fn damaged(found: &[(u32, super::words::Found)]) -> Option<String> {
    use super::words::Found;
    found.iter().find_map(|(t, f)| match f {
        Found::Unheard => Some(format!("turn {t}'s reply was not heard as the mock's voice")),
        Found::OwnSounded => Some(format!(
            "turn {t}'s reply was this call's by its sound alone: its words were damaged past reading"
        )),
        _ => None,
    })
}

impl Drop for Tape<'_> {
    fn drop(&mut self) {
        self.keeper.release(std::mem::take(&mut self.held));
    }
}

/// A call's name as a file's: letters, digits, `-`, `_` and `.` kept, the rest `_`.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .collect()
}

fn write(stem: &std::path::Path, [sent, heard, note]: [Vec<u8>; 3]) -> std::io::Result<()> {
    if let Some(dir) = stem.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let with = |ext: &str| {
        let mut p = stem.as_os_str().to_owned();
        p.push(ext);
        PathBuf::from(p)
    };
    std::fs::write(with(".sent.wav"), sent)?;
    std::fs::write(with(".heard.wav"), heard)?;
    std::fs::write(with(".txt"), note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keeper(budget: usize) -> Keeper {
        Keeper::new(crate::run::KeepAudio {
            dir: PathBuf::from("kept"),
            all: false,
            calls: 1,
            budget,
        })
    }

    #[test]
    fn the_tape_holds_what_was_heard_exactly_and_places_the_words_said() {
        let k = keeper(1 << 20);
        let mut t = Tape::new(&k, 8000);
        t.sent(160); // a frame of silence
        t.said(0, 0); // turn 1's words start with the next frame
        t.sent(160);
        t.sent(160);
        let heard: Vec<f32> = [-32768i16, -1, 0, 1, 16384, 32767]
            .iter()
            .map(|n| *n as f32 / 32768.0)
            .collect();
        t.turn = 1;
        t.heard(&heard, 900, true);
        assert_eq!(t.heard, [-32768, -1, 0, 1, 16384, 32767]);
        let words = [0.5f32; 200];
        let [sent, wav, note] = t.files("c0", None, &[], &[words.to_vec()]);
        let (x, rate) = voice::pcm::read_wav(&sent).unwrap();
        assert_eq!((x.len(), rate), (480, 8000));
        assert!(x[..160].iter().all(|v| *v == 0.0));
        assert!(x[160..360].iter().all(|v| (*v - 0.5).abs() < 1e-3));
        assert!(x[360..].iter().all(|v| *v == 0.0));
        assert_eq!(&wav[44..], &[0, 128, 255, 255, 0, 0, 1, 0, 0, 64, 255, 127]);
        let note = String::from_utf8(note).unwrap();
        assert!(
            note.contains("turn 1: the caller spoke from 0.02 s to 0.04 s of c0.sent.wav"),
            "{note}"
        );
        assert!(
            note.contains("turn 1's reply began at 0.00 s of c0.heard.wav (it arrived 0.90 s"),
            "{note}"
        );
    }

    /// A call that did not fail is kept for a reply not heard as the mock's voice, or
    /// heard as its own only by its sound; one whose every reply was read is not.
    #[test]
    fn a_reply_damaged_past_reading_keeps_the_calls_audio() {
        use crate::call::words::Found;
        assert_eq!(damaged(&[(1, Found::Own), (2, Found::Own)]), None);
        assert_eq!(
            damaged(&[(1, Found::Own), (2, Found::OwnSounded), (3, Found::Unheard)]).as_deref(),
            Some("turn 2's reply was this call's by its sound alone: its words were damaged past reading")
        );
        assert_eq!(
            damaged(&[(1, Found::Unheard)]).as_deref(),
            Some("turn 1's reply was not heard as the mock's voice")
        );
    }

    #[test]
    fn a_calls_name_is_made_safe_for_a_file() {
        assert_eq!(file_safe("3f/s0 x"), "3f_s0_x");
    }

    #[test]
    fn a_tape_past_the_steps_budget_stops_and_gives_its_memory_back() {
        let k = keeper(CHUNK);
        let mut a = Tape::new(&k, 8000);
        a.heard(&vec![0.1; CHUNK / 2], 10, true); // fills the budget exactly
        let mut b = Tape::new(&k, 8000);
        b.heard(&[0.1; 10], 20, true);
        assert_eq!((b.heard.len(), b.cut_ms), (0, Some(20)));
        drop(a);
        assert_eq!(k.used(), 0);
        let mut c = Tape::new(&k, 8000);
        c.heard(&[0.1; 10], 30, true);
        assert_eq!((c.heard.len(), c.cut_ms), (10, None));
    }
}
