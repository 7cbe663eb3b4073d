//! A call's words: the caller's utterances spoken at the line's rate (off the pacing
//! threads), and the words heard in a reply checked against the mock's ledger.

use super::tally::{Tally, Words};
use crate::driver::vars::Ctx;
use crate::run::Failure;
use crate::spec::voice::VoiceSpec;

/// Every turn's utterance at the line's rate: the user's WAV, or the words spoken.
pub(super) async fn utterances(
    v: &VoiceSpec,
    fill: &(dyn Fn(&str, u32) -> Result<String, Failure> + Sync),
    turns: u32,
    tally: &Tally,
) -> Result<Vec<Vec<f32>>, Failure> {
    let rate = v.line.rate();
    let texts: Vec<String> = match &v.wav {
        Some(_) => Vec::new(),
        None => (1..=turns)
            .map(|t| fill(&v.say, t))
            .collect::<Result<_, _>>()?,
    };
    let wav = v.wav.clone();
    let spoken = tally.background.submit(move || match wav {
        Some(w) => Ok(vec![voice::pcm::resample(&w.0, w.1, rate); turns as usize]),
        None => texts
            .iter()
            .map(|t| {
                voice::speak(t, rate).ok_or_else(|| {
                    (
                        "config".to_string(),
                        format!("voice.say could not be spoken: {t:?}"),
                    )
                })
            })
            .collect(),
    });
    spoken.await.map_err(|_| {
        (
            "config".to_string(),
            "the caller's words could not be spoken: the voice's thread is gone".to_string(),
        )
    })?
}

/// What the words of one reply were found to be.
pub(super) enum Found {
    Own,
    /// Another call's reply (its name), and whether this call's own was heard with it.
    Other(String, bool),
    Unheard,
}

impl Found {
    /// As the kept audio's note says it.
    pub fn said(&self) -> String {
        match self {
            Found::Own => "this call's reply".into(),
            Found::Other(o, false) => format!("the reply to call {o}"),
            Found::Other(o, true) => format!("the reply to call {o}, along with this call's own"),
            Found::Unheard => "none heard as the mock's voice".into(),
        }
    }
}

/// The words a caller heard in one reply, checked (and counted): this call's reply,
/// another's, or none heard. None when no ledger says who said what.
pub(super) fn words(
    heard: &[voice::Utterance],
    ctx: &Ctx<'_>,
    name: &str,
    tally: &Tally,
) -> Option<Found> {
    let owner = ctx.voice_owner.as_ref()?;
    let found: Vec<Option<String>> = heard.iter().map(|u| (owner.0)(&u.text)).collect();
    if found.is_empty() || found.iter().all(Option::is_none) {
        tally.words(Words::Unheard);
        return Some(Found::Unheard);
    }
    let own = found.iter().flatten().any(|o| o == name);
    if own {
        tally.heard_own(name);
    }
    match found.iter().flatten().find(|o| *o != name) {
        None => {
            tally.words(Words::Own);
            Some(Found::Own)
        }
        Some(other) => {
            tally.words(Words::Other);
            tally.crosstalk(name, other, own);
            Some(Found::Other(other.clone(), own))
        }
    }
}
