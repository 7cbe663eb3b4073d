//! The voice heard back from its own audio, through what a phone line and a pipeline do
//! to it: G.711 µ-law at 8 kHz, resampling up to 16 or 24 kHz, a gain change, silence
//! before and after, the first 100 ms cut off, several utterances back to back.

use voice::pcm;

const MARKED: &str =
    "[[plimsoll session=3f9a1c-s12 nonce=psn0f3a9b2c4d5e6f71 turn=3]] Please handle turn 3.";
const REPLY: &str = "The agent plans a careful answer with tools and memory, so we test again before shipping results to users.";

/// Down a phone line and back up: 24 kHz → 8 kHz µ-law → `to`.
fn phone(x: &[f32], from: u32, to: u32) -> Vec<f32> {
    let line = pcm::from_ulaw(&pcm::to_ulaw(&pcm::resample(x, from, 8000)));
    pcm::resample(&line, 8000, to)
}

#[test]
fn a_marker_survives_each_rate_and_a_phone_line() {
    for rate in voice::RATES {
        let a = voice::speak(MARKED, rate).unwrap();
        assert_eq!(voice::hear(&a, rate).as_deref(), Some(MARKED), "at {rate}");
    }
    let a = voice::speak(REPLY, 24000).unwrap();
    for to in [8000, 16000, 24000] {
        assert_eq!(
            voice::hear(&phone(&a, 24000, to), to).as_deref(),
            Some(REPLY),
            "phone to {to}"
        );
    }
}

#[test]
fn gain_silence_and_a_cut_start_do_not_lose_the_words() {
    let a = voice::speak(MARKED, 16000).unwrap();
    let quiet: Vec<f32> = a.iter().map(|v| v * 0.25).collect(); // −12 dB
    let mut padded = vec![0.0f32; 7000];
    padded.extend(&quiet);
    padded.extend(vec![0.0f32; 9000]);
    assert_eq!(voice::hear(&padded, 16000).as_deref(), Some(MARKED));
    let loud: Vec<f32> = a.iter().map(|v| v * 2.0).collect(); // +6 dB
    assert_eq!(voice::hear(&loud, 16000).as_deref(), Some(MARKED));
    let cut = &a[1600..]; // the first 100 ms gone, as an upstream VAD may cut it
    assert_eq!(voice::hear(cut, 16000).as_deref(), Some(MARKED));
}

#[test]
fn sentences_spoken_one_after_another_are_heard_each() {
    let texts = [
        "Sure, I can help with that.",
        "Your order ships today.",
        MARKED,
    ];
    let mut audio = Vec::new();
    for t in texts {
        audio.extend(voice::speak_for(t, 24000, voice::natural_seconds(t).unwrap() + 0.3).unwrap());
    }
    let heard: Vec<String> = voice::hear_all(&phone(&audio, 24000, 16000), 16000)
        .into_iter()
        .map(|u| u.text)
        .collect();
    assert_eq!(heard, texts);
}

#[test]
fn an_utterance_lasts_as_long_as_asked_as_far_as_the_voice_stretches() {
    let natural = voice::natural_seconds(REPLY).unwrap();
    let secs = |want: f64| voice::speak_for(REPLY, 24000, want).unwrap().len() as f64 / 24000.0;
    // A little longer than natural: exactly as asked.
    assert!((secs(natural + 0.2) - (natural + 0.2)).abs() < 0.01);
    // Much longer: the pauses at their longest and 0.3 s of silence after, no more — a
    // long silence after a sentence would play as a stall between sentences.
    let long = voice::speak_for(REPLY, 24000, natural * 3.0).unwrap();
    let got = long.len() as f64 / 24000.0;
    assert!(
        got > natural + 0.3 && got < natural * 3.0,
        "{got} vs {natural}"
    );
    let tail = long.iter().rev().take_while(|x| x.abs() < 1e-4).count() as f64 / 24000.0;
    assert!(tail <= 0.31, "{tail}");
    assert_eq!(voice::hear(&long, 24000).as_deref(), Some(REPLY));
}
