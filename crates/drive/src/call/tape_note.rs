//! The note beside a kept call's audio (`NAME.txt`): what each file holds, where each
//! turn's words and each reply begin in them, what the words check found, and why the
//! call was kept.

/// What the note is made from.
pub(crate) struct Facts<'a> {
    /// The files' stem: the call's name.
    pub name: &'a str,
    pub rate: u32,
    /// Samples in the sent and heard files.
    pub sent: u64,
    pub heard: u64,
    /// Where each turn's words (turn index from 0) began among the sent samples.
    pub said: &'a [(usize, u64)],
    /// Each reply: its turn (0: the greeting), first heard sample, arrival ms.
    pub replies: &'a [(u32, u64, u64)],
    /// What the words check found, turn by turn.
    pub words: &'a [(u32, String)],
    pub went_wrong: Option<&'a str>,
    /// Where the tape stopped, when the step's memory for tapes was spent.
    pub cut_ms: Option<u64>,
    /// Each turn's words, in samples.
    pub mouths: &'a [usize],
}

pub(crate) fn note(f: &Facts) -> String {
    let s = |n: u64| n as f64 / f.rate as f64;
    let mut out = vec![
        format!(
            "{}.sent.wav: what the caller sent, frame after frame ({:.2} s at {} Hz)",
            f.name,
            s(f.sent),
            f.rate
        ),
        format!(
            "{}.heard.wav: every sample of the bot's audio the caller received, in the order it came, nothing added or removed ({:.2} s); a gap the bot left is not in it, so a reply may start earlier here than in the call",
            f.name,
            s(f.heard)
        ),
        String::new(),
    ];
    for &(i, at) in f.said {
        let len = f.mouths.get(i).copied().unwrap_or(0) as u64;
        out.push(format!(
            "turn {}: the caller spoke from {:.2} s to {:.2} s of {}.sent.wav",
            i + 1,
            s(at),
            s(at + len),
            f.name
        ));
    }
    for &(turn, at, arrived_ms) in f.replies {
        let what = match turn {
            0 => "the greeting".to_string(),
            t => format!("turn {t}'s reply"),
        };
        out.push(format!(
            "{what} began at {:.2} s of {}.heard.wav (it arrived {:.2} s into the call)",
            s(at),
            f.name,
            arrived_ms as f64 / 1000.0
        ));
    }
    for (turn, found) in f.words {
        out.push(format!("turn {turn}'s words: {found}"));
    }
    if let Some(ms) = f.cut_ms {
        out.push(format!("the recording stopped {:.2} s into the call: the step's calls had filled the memory kept for their audio", ms as f64 / 1000.0));
    }
    out.push(String::new());
    out.push(match f.went_wrong {
        Some(why) => format!("kept because {why}"),
        None => "kept because every call's audio was asked for".into(),
    });
    out.join("\n") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_places_each_turn_and_reply_in_its_file() {
        let words = vec![
            (1, "this call's reply".to_string()),
            (2, "none heard as the mock's voice".to_string()),
        ];
        let n = note(&Facts {
            name: "ab12-s0",
            rate: 8000,
            sent: 80_000,
            heard: 40_000,
            said: &[(0, 8_000), (1, 48_000)],
            replies: &[(1, 0, 3_250), (2, 20_000, 8_100)],
            words: &words,
            went_wrong: Some("turn 2's reply was not heard as the mock's voice"),
            cut_ms: None,
            mouths: &[12_000, 8_000],
        });
        assert!(n.contains("(10.00 s at 8000 Hz)"), "{n}");
        assert!(n.contains("nothing added or removed (5.00 s)"), "{n}");
        assert!(
            n.contains("turn 1: the caller spoke from 1.00 s to 2.50 s of ab12-s0.sent.wav"),
            "{n}"
        );
        assert!(
            n.contains("turn 2: the caller spoke from 6.00 s to 7.00 s"),
            "{n}"
        );
        assert!(n.contains("turn 2's reply began at 2.50 s of ab12-s0.heard.wav (it arrived 8.10 s into the call)"), "{n}");
        assert!(
            n.contains("turn 2's words: none heard as the mock's voice"),
            "{n}"
        );
        assert!(
            n.ends_with("kept because turn 2's reply was not heard as the mock's voice\n"),
            "{n}"
        );
        assert!(!n.contains("recording stopped"));
    }
}
