//! `[voice]`: its defaults, and every bad value refused with its line and the fix.

use super::super::SessionSpec;
use super::Line;

fn parse(text: &str) -> Result<SessionSpec, String> {
    SessionSpec::parse(text, "session.toml").map_err(|e| e.to_string())
}

#[test]
fn a_twilio_call_takes_the_line_s_defaults() {
    let s = parse("protocol = \"twilio\"\nurl = \"{{ws_base}}/ws\"\nturns = 2\n").unwrap();
    let v = s.voice.expect("a voice call");
    assert_eq!(v.line, Line::Twilio);
    assert_eq!(
        (v.frame_ms, v.answer_timeout_ms, v.reply_end_ms),
        (20, 8000, 800)
    );
    assert!(v.say.contains("[[plimsoll session={{session}}") && !v.greeting);
    let pcm = parse(
        "protocol = \"pcm-ws\"\nurl = \"{{ws_base}}/pcm\"\n[voice]\nrate = 24000\nframe_ms = 40\n",
    )
    .unwrap();
    let v = pcm.voice.unwrap();
    assert_eq!((v.line, v.frame_ms), (Line::Pcm { rate: 24000 }, 40));
}

#[test]
fn bad_values_name_their_line_and_the_fix() {
    let e = parse("protocol = \"twilio\"\nurl = \"{{ws_base}}/ws\"\n[voice]\nrate = 16000\n")
        .unwrap_err();
    assert!(
        e.starts_with("session.toml:4:") && e.contains("µ-law at 8000 Hz") && e.contains("pcm-ws"),
        "{e}"
    );
    let e = parse("protocol = \"twilio\"\nurl = \"{{ws_base}}/ws\"\n[voice]\nbarge_in = 1.5\n")
        .unwrap_err();
    assert!(
        e.starts_with("session.toml:4:") && e.contains("share of turns, 0 to 1"),
        "{e}"
    );
    let e = parse("url = \"{{base}}/turn\"\n[voice]\nsay = \"hi\"\n").unwrap_err();
    assert!(
        e.contains("[voice] applies to protocol = \"twilio\", \"pcm-ws\" or \"webrtc\""),
        "{e}"
    );
    let e = parse("protocol = \"pcm-ws\"\nurl = \"{{ws_base}}/pcm\"\n[voice]\nrate = 4000\n")
        .unwrap_err();
    assert!(e.contains("voice.rate") && e.contains("8000"), "{e}");
    let e = parse("protocol = \"twilio\"\nurl = \"{{ws_base}}/ws\"\n[voice]\nanswer_timeout = 3\n")
        .unwrap_err();
    assert!(e.contains("answer_timeout"), "{e}");
}

#[test]
fn a_wav_that_is_not_16_bit_mono_or_is_missing_is_refused() {
    let dir = std::env::temp_dir().join(format!("plimsoll-voice-spec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stereo = voice_wav(2, 16);
    std::fs::write(dir.join("stereo.wav"), stereo).unwrap();
    std::fs::write(dir.join("mono.wav"), voice_wav(1, 16)).unwrap();
    let session = |wav: &str| {
        let p = dir.join("session.toml");
        std::fs::write(
            &p,
            format!(
                "protocol = \"twilio\"\nurl = \"{{{{ws_base}}}}/ws\"\n[voice]\nwav = \"{wav}\"\n"
            ),
        )
        .unwrap();
        SessionSpec::load(&p).map_err(|e| e.to_string())
    };
    let e = session("stereo.wav").unwrap_err();
    assert!(
        e.contains(":4:")
            && e.contains(
                "voice.wav \"stereo.wav\": is 2 channels, 16-bit integer: give a 16-bit mono WAV"
            ),
        "{e}"
    );
    let e = session("gone.wav").unwrap_err();
    assert!(e.contains("voice.wav \"gone.wav\": cannot read it"), "{e}");
    let ok = session("mono.wav").unwrap().voice.unwrap();
    assert_eq!(ok.wav.as_ref().map(|w| w.1), Some(8000));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A WAV of 0.1 s at 8 kHz with `channels` channels of `bits` bits.
fn voice_wav(channels: u16, bits: u16) -> Vec<u8> {
    let frames = 800u32;
    let block = channels * bits / 8;
    let data = vec![0x10u8; (frames * block as u32) as usize];
    let mut out = b"RIFF".to_vec();
    out.extend((36 + data.len() as u32).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(channels.to_le_bytes());
    out.extend(8000u32.to_le_bytes());
    out.extend((8000 * block as u32).to_le_bytes());
    out.extend(block.to_le_bytes());
    out.extend(bits.to_le_bytes());
    out.extend(b"data");
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    out
}

#[test]
fn a_webrtc_call_signals_as_pipecat_or_whip_and_refuses_what_opus_cannot_carry() {
    let s = parse("protocol = \"webrtc\"\nurl = \"{{base}}/api/offer\"\n").unwrap();
    let v = s.voice.expect("a voice call");
    assert_eq!(v.line, Line::WebRtc(rtc::Signaling::Pipecat));
    assert_eq!(v.line.rate(), 16000);
    let whip = "protocol = \"webrtc\"\nurl = \"{{base}}/whip\"\n[voice]\nsignaling = \"whip\"\n";
    assert_eq!(
        parse(whip).unwrap().voice.unwrap().line,
        Line::WebRtc(rtc::Signaling::Whip)
    );
    let bad = |voice: &str| {
        parse(&format!(
            "protocol = \"webrtc\"\nurl = \"{{{{base}}}}/api/offer\"\n[voice]\n{voice}\n"
        ))
        .unwrap_err()
    };
    let e = bad("signaling = \"sip\"");
    assert!(
        e.starts_with("session.toml:4:")
            && e.contains("\"pipecat\"")
            && e.contains("\"whip\"")
            && e.contains("\"livekit\""),
        "{e}"
    );
    let e = bad("api_key = \"devkey\"");
    assert!(
        e.starts_with("session.toml:4:")
            && e.contains("voice.api_key applies to signaling = \"livekit\""),
        "{e}"
    );
    let e = bad("rate = 24000");
    assert!(
        e.starts_with("session.toml:4:") && e.contains("Opus at 16000 Hz"),
        "{e}"
    );
    let e = bad("frame_ms = 30");
    assert!(
        e.starts_with("session.toml:4:") && e.contains("10, 20, 40 or 60 ms"),
        "{e}"
    );
    let e = parse("protocol = \"webrtc\"\nurl = \"{{ws_base}}/ws\"\n").unwrap_err();
    assert!(e.contains("http:// or {{base}}"), "{e}");
    let e =
        parse("protocol = \"twilio\"\nurl = \"{{ws_base}}/ws\"\n[voice]\nsignaling = \"whip\"\n")
            .unwrap_err();
    assert!(
        e.starts_with("session.toml:4:") && e.contains("applies to protocol = \"webrtc\""),
        "{e}"
    );
}

#[test]
fn a_livekit_call_takes_its_key_pair_and_its_agent() {
    let lk = |voice: &str| {
        parse(&format!(
            "protocol = \"webrtc\"\nurl = \"ws://127.0.0.1:7880\"\n[voice]\nsignaling = \"livekit\"\n{voice}\n"
        ))
    };
    let s = lk("api_key = \"devkey\"\napi_secret = \"secret\"\nagent = \"support\"").unwrap();
    let v = s.voice.unwrap();
    assert_eq!(v.line, Line::WebRtc(rtc::Signaling::LiveKit));
    let k = v.livekit.unwrap();
    assert_eq!((k.key.as_str(), k.secret.as_str()), ("devkey", "secret"));
    assert_eq!(k.dispatch, rtc::livekit::Dispatch::Named("support".into()));
    let s = lk("api_key = \"devkey\"\napi_secret = \"secret\"").unwrap();
    assert_eq!(
        s.voice.unwrap().livekit.unwrap().dispatch,
        rtc::livekit::Dispatch::Automatic
    );
    let e = lk("api_key = \"devkey\"\napi_secret = \"secret\"\nagent = \"\"").unwrap_err();
    assert!(
        e.starts_with("session.toml:7:") && e.contains("voice.agent is empty"),
        "{e}"
    );
    if std::env::var_os("LIVEKIT_API_SECRET").is_none() {
        let e = lk("api_key = \"devkey\"").unwrap_err();
        assert!(
            e.contains("set [voice] api_secret, or LIVEKIT_API_SECRET"),
            "{e}"
        );
    }
}
