//! A call's words: the caller's utterances spoken at the line's rate (off the pacing
//! threads), and the words heard in a reply checked against the mock's ledger.

use crate::run::tally::{Tally, Words};
use crate::run::Ctx;
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
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Found {
    Own,
    /// Another call's reply (its name), and whether this call's own was heard with it.
    Other(String, bool),
    /// The mock's reply to words that named no call ([`NO_CALL`]): the caller's marker
    /// never reached the LLM — the bot's speech to text lost its start (a VAD's cut), or the
    /// bot asked in words of its own. Not another call's reply.
    NoCall,
    Unheard,
}

use crate::run::options::NO_CALL;

impl Found {
    /// As the kept audio's note says it.
    pub fn said(&self) -> String {
        match self {
            Found::Own => "this call's reply".into(),
            Found::Other(o, false) => format!("the reply to call {o}"),
            Found::Other(o, true) => format!("the reply to call {o}, along with this call's own"),
            Found::NoCall => "a reply to words that named no call".into(),
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
    let f = classify(&found, name);
    match &f {
        Found::Own => tally.words(Words::Own),
        Found::Other(other, own) => {
            tally.words(Words::Other);
            tally.crosstalk(name, other, *own);
        }
        Found::NoCall | Found::Unheard => tally.words(Words::Unheard),
    }
    if matches!(f, Found::Own | Found::Other(_, true)) {
        tally.heard_own(name);
    }
    Some(f)
}

/// One reply's utterances by whose reply each was (None: not read as the mock's voice),
/// for the call `name`: another call's named first, then its own, then a reply to words
/// that named no call.
fn classify(found: &[Option<String>], name: &str) -> Found {
    let calls = || found.iter().flatten().filter(|o| *o != NO_CALL);
    let own = calls().any(|o| o == name);
    match (calls().find(|o| *o != name), own) {
        (Some(other), own) => Found::Other(other.clone(), own),
        (None, true) => Found::Own,
        (None, false) if found.iter().flatten().any(|o| o == NO_CALL) => Found::NoCall,
        (None, false) => Found::Unheard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_to_words_that_named_no_call_is_no_calls_not_another_calls() {
        let s = |o: &str| Some(o.to_string());
        assert_eq!(classify(&[s("s0")], "s0"), Found::Own);
        assert_eq!(classify(&[s("s1")], "s0"), Found::Other("s1".into(), false));
        assert_eq!(
            classify(&[s("s0"), s("s1")], "s0"),
            Found::Other("s1".into(), true)
        );
        // The bot's STT cut the caller's marker: the mock answered words of no call's.
        assert_eq!(classify(&[s(NO_CALL)], "s0"), Found::NoCall);
        assert_eq!(classify(&[None, s(NO_CALL)], "s0"), Found::NoCall);
        assert_eq!(classify(&[s(NO_CALL), s("s0")], "s0"), Found::Own);
        assert_eq!(
            classify(&[s(NO_CALL), s("s1")], "s0"),
            Found::Other("s1".into(), false)
        );
        assert_eq!(classify(&[None], "s0"), Found::Unheard);
        assert_eq!(classify(&[], "s0"), Found::Unheard);
    }
}
