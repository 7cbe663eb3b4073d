//! A call's words: the caller's utterances spoken at the line's rate (off the pacing
//! threads), and the words heard in a reply checked against the mock's ledger.

use crate::run::options::Owner;
use crate::run::tally::{Tally, Words};
use crate::run::Failure;
use crate::spec::voice::VoiceSpec;
use std::time::Duration;

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
    /// The same found by its sound where no words could be read: the replies cut too fine
    /// to read (two interleaved piece by piece on one output).
    Sounded(String, bool),
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
            Found::Sounded(o, false) => {
                format!("the reply to call {o}, by its sound (cut too fine to read)")
            }
            Found::Sounded(o, true) => format!(
                "the reply to call {o} interleaved with this call's own, by their sound (cut too fine to read)"
            ),
            Found::NoCall => "a reply to words that named no call".into(),
            Found::Unheard => "none heard as the mock's voice".into(),
        }
    }
}

impl Found {
    /// Why call `name` fails for what it heard: another call's reply, or one to words
    /// that named no call; None for its own, or none heard (counted, not a failure).
    pub fn failure(&self, name: &str) -> Option<String> {
        match self {
            Found::Other(o, false) => Some(format!("call {name} heard the reply to call {o}")),
            Found::Other(o, true) => Some(format!(
                "call {name} heard the reply to call {o} along with its own"
            )),
            Found::Sounded(o, own) => Some(format!(
                "call {name} heard the reply to call {o}{}, by its sound (cut too fine to read)",
                if *own { " interleaved with its own" } else { "" }
            )),
            Found::NoCall => Some(format!(
                "call {name} heard a reply to words that named no call: the caller's marker never reached the LLM (the bot's speech to text lost their start, or it asked in words of its own)"
            )),
            Found::Own | Found::Unheard => None,
        }
    }
}

/// The words a caller heard in one reply, checked (and counted): this call's reply,
/// another's (read, or found by its sound), or none heard.
pub(super) fn words(heard: &Reading, name: &str, tally: &Tally) -> Found {
    let f = match classify(&heard.owners, name) {
        f @ (Found::Unheard | Found::NoCall) => by_sound(&heard.sounds, name).unwrap_or(f),
        f => f,
    };
    match &f {
        Found::Own => tally.words(Words::Own),
        Found::Other(other, own) | Found::Sounded(other, own) => {
            tally.words(Words::Other);
            tally.crosstalk(name, other, *own, matches!(f, Found::Sounded(..)));
        }
        Found::NoCall | Found::Unheard => tally.words(Words::Unheard),
    }
    if matches!(
        f,
        Found::Own | Found::Other(_, true) | Found::Sounded(_, true)
    ) {
        tally.heard_own(name);
    }
    f
}

/// What a caller heard of one reply: whose reply each utterance read is (None: not read
/// as the mock's voice), and where none is a call's, the calls whose replies its sound
/// holds.
#[derive(Debug, Default)]
pub(super) struct Reading {
    pub owners: Vec<Option<String>>,
    pub sounds: Vec<String>,
}

/// Of a candidate's own sound, the share that must be found in a reply to say it was
/// heard there (four times what another reply's chance likeness reaches, 0.13 at most on
/// the voice's tests), and at least this many seconds of it (a short reply is no proof).
const FOUND: f64 = 0.5;
const FOUND_S: f64 = 1.0;
/// The most calls' replies a reply's sound is compared with, this call's own first.
const CANDIDATES: usize = 8;
/// How long before the turn began a reply heard in it may have been spoken.
const SLACK: Duration = Duration::from_secs(5);

/// One reply's audio read and its words' owners asked, off the pacing threads; where no
/// utterance is any call's, its sound compared with the replies the mock spoke during
/// the turn (`began` to `ended`).
pub(super) fn read(
    audio: Vec<f32>,
    rate: u32,
    owner: Owner,
    name: &str,
    (began, ended): (std::time::Instant, std::time::Instant),
) -> Reading {
    let said = voice::hear_all(&audio, rate);
    let owners: Vec<Option<String>> = said.iter().map(|u| (owner.who)(&u.text)).collect();
    let mut spoken = match owners.iter().flatten().any(|o| o != NO_CALL) {
        true => Vec::new(),
        false => owner.spoken_lately(began.elapsed() + SLACK, ended.elapsed(), 64),
    };
    spoken.sort_by_key(|(whose, _)| whose != name);
    spoken.truncate(CANDIDATES);
    let texts: Vec<Vec<String>> = spoken.iter().map(|(_, t)| t.clone()).collect();
    let likeness = match texts.is_empty() {
        true => Vec::new(),
        false => voice::likeness::likeness(&audio, rate, &texts),
    };
    let sounds = spoken
        .into_iter()
        .zip(likeness)
        .filter(|(_, l)| l.found >= FOUND && l.found_s >= FOUND_S)
        .map(|((whose, _), _)| whose)
        .collect();
    Reading { owners, sounds }
}

/// A reply no words were read from, by whose replies its sound holds: another call's
/// (with this call's own or not), or None (its own alone is no news: still unheard).
fn by_sound(sounds: &[String], name: &str) -> Option<Found> {
    let other = sounds.iter().find(|o| *o != name && *o != NO_CALL)?;
    Some(Found::Sounded(
        other.clone(),
        sounds.iter().any(|o| o == name),
    ))
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

    /// Two replies interleaved 100 ms at a time on one call: neither read, both found by
    /// their sound among the turn's replies; a one-word reply of a third call is too short
    /// to be proof, and its whole sound is not there.
    #[test]
    fn an_unread_reply_is_compared_with_the_turns_replies_by_its_sound() {
        use std::sync::Arc;
        let (a, b) = (
            "Your order shipped yesterday and should arrive by Friday afternoon.",
            "The agent plans a careful answer with tools and memory, so we test again.",
        );
        let (x, y) = (
            voice::speak(a, 16000).unwrap(),
            voice::speak(b, 16000).unwrap(),
        );
        let mut heard = Vec::new();
        for i in 0..x.len().max(y.len()).div_ceil(1600) {
            for z in [&x, &y] {
                heard.extend(z.chunks(1600).nth(i).unwrap_or_default());
            }
        }
        let list: Arc<crate::run::options::Spoken> = Arc::new(move |_, _, _| {
            let one = |s: &str, t: &str| (s.to_string(), vec![t.to_string()]);
            vec![one("s2", "Tide."), one("s1", b), one("s0", a)]
        });
        let owner = Owner::new(Arc::new(|_| None), Some(list));
        let now = std::time::Instant::now();
        let r = read(heard, 16000, owner, "s0", (now, now));
        assert_eq!(r.sounds, ["s0", "s1"], "{r:?}");
        assert_eq!(
            by_sound(&r.sounds, "s0"),
            Some(Found::Sounded("s1".into(), true))
        );
    }

    #[test]
    fn a_reply_found_by_its_sound_is_named_only_when_it_holds_another_calls() {
        let s = |v: &[&str]| v.iter().map(|o| o.to_string()).collect::<Vec<_>>();
        let two = by_sound(&s(&["s1", "s0"]), "s0");
        assert_eq!(two, Some(Found::Sounded("s1".into(), true)));
        let other = by_sound(&s(&["s1"]), "s0");
        assert_eq!(other, Some(Found::Sounded("s1".into(), false)));
        // Its own alone, or a reply to words that named no call: still unheard.
        assert_eq!(by_sound(&s(&["s0"]), "s0"), None);
        assert_eq!(by_sound(&s(&[NO_CALL]), "s0"), None);
    }
}
