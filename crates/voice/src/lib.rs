//! Plimsoll's synthetic voice: text spoken as speech-like audio that voice activity
//! detectors hear as speech, and read back from the audio itself. It is read through G.711
//! at 8 kHz, resampling, a gain change and any chunking, so the integrity oracle covers
//! voice: the words a call spoke must reach that call's LLM request, and the audio a call
//! hears must be the reply to that call. Nothing here needs a model installed; the
//! encoding is Plimsoll's own (`docs/voice-encoding.md`), fast and deterministic.
//!
//! `code` turns text into bits (a dictionary code, ~2 bits a character) and back;
//! `frame` adds the CRC and cuts the bits into 9-bit syllables; `synth` speaks syllables
//! as a formant voice; `hear` reads syllables back out of audio; `pcm` is the plumbing
//! (16-bit PCM, µ-law, A-law, WAV, resampling); `vad` tells speech from silence as audio
//! streams in, as a server's voice activity detection does; `pool` runs speaking and
//! hearing off the clock, on threads of lowered priority; `holes` finds silence put inside
//! speech (a transport padding a dry queue). The driver speaks with it and
//! the mock hears with it, and the other way round: one voice, not two copies.

pub mod code;
mod dsp;
pub mod frame;
mod hear;
pub mod holes;
pub mod likeness;
pub mod pcm;
pub mod pool;
mod rs;
pub mod synth;
pub mod vad;

pub use hear::Utterance;
pub use synth::Layout;

/// The rates the voice is spoken at directly; others are resampled from 24 kHz.
pub const RATES: [u32; 3] = [8000, 16000, 24000];

/// `text` spoken at `rate`, as long as its syllables take (about 19 characters a second
/// of ordinary English); None only for an empty rate.
pub fn speak(text: &str, rate: u32) -> Option<Vec<f32>> {
    speak_with(text, rate, Layout::default())
}

/// The longest pause between phrases a stretched utterance gets: below the silence a
/// voice activity detector ends a turn at (OpenAI's server VAD waits 200-500 ms, Silero in
/// Pipecat 800 ms), so one utterance stays one turn.
pub const MAX_PAUSE_MS: u32 = 180;

/// The most silence speech is given after its last syllable to last longer: a TTS
/// sentence that ends in a long silence would play as a stall between sentences.
pub const MAX_TAIL_MS: u32 = 300;

/// `text` spoken at `rate` lasting `seconds` where the voice can stretch that far: its
/// natural pace at the least; the pauses between phrases lengthened (to [`MAX_PAUSE_MS`]
/// each), then silence after the last syllable (at most [`MAX_TAIL_MS`]).
pub fn speak_for(text: &str, rate: u32, seconds: f64) -> Option<Vec<f32>> {
    let symbols = frame::frame(text)?;
    let natural = synth::duration_ms(&symbols, Layout::default()) as f64;
    let want = seconds * 1000.0;
    let mut layout = Layout::default();
    if want > natural {
        let pauses = synth::pauses(&symbols) as f64;
        let room = want - natural;
        let most = (MAX_PAUSE_MS - synth::PAUSE_MS) as f64;
        let per = if pauses > 0.0 {
            (room / pauses).min(most)
        } else {
            0.0
        };
        layout.pause_ms += (per / 2.0).floor() as u32 * 2;
        let now = synth::duration_ms(&symbols, layout) as f64;
        layout.tail_ms = ((((want - now).max(0.0) / 2.0).ceil() as u32) * 2).min(MAX_TAIL_MS);
    }
    speak_symbols(&symbols, rate, layout)
}

/// `text` spoken with this layout.
pub fn speak_with(text: &str, rate: u32, layout: Layout) -> Option<Vec<f32>> {
    speak_symbols(&frame::frame(text)?, rate, layout)
}

fn speak_symbols(symbols: &[synth::Symbol], rate: u32, layout: Layout) -> Option<Vec<f32>> {
    if rate == 0 {
        return None;
    }
    if RATES.contains(&rate) {
        return Some(synth::symbols(symbols, rate, layout));
    }
    Some(pcm::resample(
        &synth::symbols(symbols, 24000, layout),
        24000,
        rate,
    ))
}

/// How long `text` takes to say with the natural layout, in seconds.
pub fn natural_seconds(text: &str) -> Option<f64> {
    let symbols = frame::frame(text)?;
    Some(synth::duration_ms(&symbols, Layout::default()) as f64 / 1000.0)
}

/// The text one utterance carries, or None (audio mono at `rate`).
pub fn hear(samples: &[f32], rate: u32) -> Option<String> {
    hear::one(samples, rate)
}

/// Every utterance in longer audio, in order (a reply spoken sentence by sentence).
pub fn hear_all(samples: &[f32], rate: u32) -> Vec<Utterance> {
    hear::all(samples, rate)
}
