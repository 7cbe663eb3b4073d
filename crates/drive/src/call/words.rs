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
                    Failure::new("config", format!("voice.say could not be spoken: {t:?}"))
                })
            })
            .collect(),
    });
    spoken.await.map_err(|_| {
        Failure::new(
            "config",
            "the caller's words could not be spoken: the voice's thread is gone",
        )
    })?
}

/// What the words of one reply were found to be.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Found {
    Own,
    /// This call's own reply found by its sound alone, where no words could be read: a
    /// pipeline damaged it past reading (silences put inside it, a low bitrate, loss) or
    /// only a stretch of it came through.
    OwnSounded,
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
            Found::OwnSounded => "this call's reply, by its sound (too damaged to read)".into(),
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
            Found::Own | Found::OwnSounded | Found::Unheard => None,
        }
    }
}

/// The words a caller heard in one reply, checked (and counted): this call's reply,
/// another's (read, or found by its sound), or none heard.
pub(super) fn words(heard: &Reading, name: &str, tally: &Tally) -> Found {
    // Found by its sound: another call's reply where none or no call's was read; this
    // call's own only where none was (a reply to words that named no call stays that).
    let f = match (classify(&heard.owners, name), by_sound(&heard.sounds, name)) {
        (Found::Unheard, Some(s)) => s,
        (Found::NoCall, Some(s @ Found::Sounded(..))) => s,
        (f, _) => f,
    };
    match &f {
        Found::Own => tally.words(Words::Own),
        Found::OwnSounded => tally.words(Words::OwnSounded),
        Found::Other(other, own) | Found::Sounded(other, own) => {
            tally.words(Words::Other);
            tally.crosstalk(name, other, *own, matches!(f, Found::Sounded(..)));
        }
        Found::NoCall | Found::Unheard => tally.words(Words::Unheard),
    }
    if matches!(
        f,
        Found::Own | Found::OwnSounded | Found::Other(_, true) | Found::Sounded(_, true)
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
    let ask = |audio: &[f32]| -> Vec<Option<String>> {
        let said = voice::hear_all(audio, rate);
        said.iter().map(|u| (owner.who)(&u.text)).collect()
    };
    let mut owners = ask(&audio);
    // Read again with the holes a starved transport padded it with taken out.
    if !any_call(&owners) {
        if let Some(again) = voice::holes::closed(&audio, rate).map(|c| ask(&c)) {
            if any_call(&again) {
                owners = again;
            }
        }
    }
    let mut spoken = match any_call(&owners) {
        true => Vec::new(),
        false => owner.spoken_lately(began.elapsed() + SLACK, ended.elapsed(), 64),
    };
    spoken.sort_by_key(|(whose, _)| whose != name);
    // Another call's reply in the same words as this call's own cannot be told from it.
    if let Some((_, own)) = spoken.first().filter(|(whose, _)| whose == name).cloned() {
        spoken.retain(|(whose, texts)| whose == name || *texts != own);
    }
    spoken.truncate(CANDIDATES);
    let texts: Vec<Vec<String>> = spoken.iter().map(|(_, t)| t.clone()).collect();
    let likeness = match texts.is_empty() {
        true => Vec::new(),
        false => voice::likeness::likeness(&audio, rate, &texts),
    };
    let sounds = spoken
        .into_iter()
        .zip(voice::likeness::heard(&likeness))
        .filter(|(_, heard)| *heard)
        .map(|((whose, _), _)| whose)
        .collect();
    Reading { owners, sounds }
}

/// Whether any utterance read is a call's reply (not one to words that named no call):
/// where none is, the reply is read again, then compared by its sound.
fn any_call(owners: &[Option<String>]) -> bool {
    owners.iter().flatten().any(|o| o != NO_CALL)
}

/// A reply no words were read from, by whose replies its sound holds: another call's
/// (with this call's own or not), this call's own alone, or None.
fn by_sound(sounds: &[String], name: &str) -> Option<Found> {
    let own = sounds.iter().any(|o| o == name);
    match sounds.iter().find(|o| *o != name && *o != NO_CALL) {
        Some(other) => Some(Found::Sounded(other.clone(), own)),
        None => own.then_some(Found::OwnSounded),
    }
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

    /// Two seconds from the middle of a reply, its opening cut (a pipeline that lost the
    /// rest): no words read; its sound is this call's own, and another call's reply in the
    /// same words is no candidate (it could not be told from it). Heard, by its sound.
    #[test]
    fn a_stretch_of_this_calls_own_reply_is_heard_by_its_sound() {
        use std::sync::Arc;
        let a = "Your order shipped yesterday and should arrive by Friday afternoon.";
        let b = "The agent plans a careful answer with tools and memory, so we test again.";
        let heard = voice::speak(a, 16000).unwrap()[8000..40000].to_vec();
        let list: Arc<crate::run::options::Spoken> = Arc::new(move |_, _, _| {
            let one = |s: &str, t: &str| (s.to_string(), vec![t.to_string()]);
            vec![one("s1", b), one("s2", a), one("s0", a)]
        });
        let who = move |t: &str| (t == a).then(|| "s0".to_string());
        let owner = Owner::new(Arc::new(who), Some(list));
        let now = std::time::Instant::now();
        let tally = crate::run::tally::Tally::new("twilio", 20);
        let r = read(heard, 16000, owner, "s0", (now, now));
        assert_eq!(
            (r.owners.as_slice(), r.sounds.as_slice()),
            (&[][..], &["s0".to_string()][..]),
            "{r:?}"
        );
        assert_eq!(words(&r, "s0", &tally), Found::OwnSounded);
        let v = tally.figures();
        assert_eq!(
            (
                v.words_checked,
                v.words_by_sound,
                v.words_unheard,
                v.words_wrong
            ),
            (1, 1, 0, 0)
        );
    }

    /// What was read decides first: a reply to words that named no call stays that though
    /// its sound holds this call's own; another call's found by sound is named all the same.
    #[test]
    fn the_sound_overrides_none_read_and_no_calls_only_with_another_calls() {
        let tally = crate::run::tally::Tally::new("twilio", 20);
        let r = |owners: &[Option<&str>], sounds: &[&str]| Reading {
            owners: owners.iter().map(|o| o.map(String::from)).collect(),
            sounds: sounds.iter().map(|o| o.to_string()).collect(),
        };
        let f = |owners, sounds| words(&r(owners, sounds), "s0", &tally);
        assert_eq!(f(&[None], &["s0"]), Found::OwnSounded);
        assert_eq!(f(&[Some(NO_CALL)], &["s0"]), Found::NoCall);
        assert_eq!(
            f(&[Some(NO_CALL)], &["s1"]),
            Found::Sounded("s1".into(), false)
        );
        assert_eq!(f(&[Some("s0")], &[]), Found::Own);
        assert_eq!(f(&[None], &[]), Found::Unheard);
    }

    #[test]
    fn a_reply_found_by_its_sound_is_named_only_when_it_holds_another_calls() {
        let s = |v: &[&str]| v.iter().map(|o| o.to_string()).collect::<Vec<_>>();
        let two = by_sound(&s(&["s1", "s0"]), "s0");
        assert_eq!(two, Some(Found::Sounded("s1".into(), true)));
        let other = by_sound(&s(&["s1"]), "s0");
        assert_eq!(other, Some(Found::Sounded("s1".into(), false)));
        // Its own alone: heard, by its sound; a reply to words that named no call: none.
        assert_eq!(by_sound(&s(&["s0"]), "s0"), Some(Found::OwnSounded));
        assert_eq!(by_sound(&s(&[NO_CALL]), "s0"), None);
        assert_eq!(by_sound(&[], "s0"), None);
    }
}
