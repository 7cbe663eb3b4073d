//! A step of voice calls in words: the lines under its row (how soon the bot answered,
//! how its audio broke, the words heard and on which call, the network, the stages, what
//! a call costs), `check`'s problems and its all-well line. The row itself is `table`'s.

use crate::num::cell;
use result::StepResult;

/// The calls table's header (with the state column: every voice step has a state).
/// What a tree of processes held before the first call and at the peak: by PSS where it
/// was read (each page the processes share counted once), with the summed RSS beside it,
/// which counts those pages again in every process.
fn memory_line(r: &StepResult, before: u32, peak: u32) -> String {
    let rss_per_call = r.rss_kb_per_session / 1024.0;
    match &r.pss {
        Some(p) => format!(
            "  memory (PSS: each page its processes share counted once): {:.0} MB before the first call, in {} (what a worker keeps warm is there); at the peak {:.0} MB in {peak} — {:.0} MB a call; their summed RSS, {:.0} → {:.0} MB, counts the shared pages in every process ({:.0} MB a call)",
            p.baseline_mb,
            crate::words::count(before, "process"),
            p.peak_mb,
            p.kb_per_session / 1024.0,
            r.baseline_rss_mb,
            r.peak_rss_mb,
            rss_per_call
        ),
        None => format!(
            "  memory (RSS): {:.0} MB before the first call, in {} (what a worker keeps warm is there); at the peak {:.0} MB in {peak} — {:.0} MB a call",
            r.baseline_rss_mb,
            crate::words::count(before, "process"),
            r.peak_rss_mb,
            rss_per_call
        ),
    }
}

/// A step of calls on the terminal: the step line, then the replies, the audio, the
/// words, the calls, what the mock's audio stages did, and the harness's frame timing.
pub fn step_lines(r: &StepResult, v: &result::VoiceCalls, turns: &str) -> Vec<String> {
    let (measure, per_call_mb, peak_mb) = r.memory();
    let mut out = vec![format!(
        "step: {} over {} × {turns} — {} ok, {} failed in {:.1} s; peak {} {:.1} MB ({:.1} MB/call), {}, {} CPU ms per call-second",
        crate::words::count(r.concurrency as u64, "concurrent call"),
        transport(v),
        r.sessions_ok,
        r.sessions_failed,
        r.wall_ms / 1000.0,
        measure.as_str(),
        peak_mb,
        per_call_mb,
        crate::words::count(r.peak_threads, "thread"),
        cell(r.cpu_ms_per_call_second()),
    )];
    if let (Some(b), Some(p)) = (r.baseline_processes, r.peak_processes.filter(|p| *p > 1)) {
        out.push(memory_line(r, b, p));
    }
    out.extend(voice_lines(r, v));
    out
}

/// "Twilio Media Streams", "WebRTC (Opus)" or "raw PCM".
pub fn transport(v: &result::VoiceCalls) -> &'static str {
    match v.protocol.as_str() {
        "twilio" => "Twilio Media Streams",
        "webrtc" => "WebRTC (Opus)",
        _ => "raw PCM",
    }
}

/// What the callers heard, under a step's line (or a merged one's): the replies, the
/// audio, the words, the calls, the mock's audio stages and the harness's frame timing.
pub fn voice_lines(r: &StepResult, v: &result::VoiceCalls) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "  replies: {} answered; response p50/p95/p99 {} / {} / {} ms (the end of the caller's speech to the bot's first audio)",
        v.turns,
        cell(v.response_p50_ms),
        cell(v.response_p95_ms),
        cell(v.response_p99_ms)
    ));
    out.push(audio_line(v));
    out.push(words_line(v));
    out.extend(v.kept_audio.as_ref().map(kept_line));
    out.push(format!(
        "  calls: setup p50 {} ms, {} dropped{}",
        cell(v.setup_p50_ms),
        v.dropped,
        match (v.barge_ins, v.barge_stop_p50_ms) {
            (0, _) => String::new(),
            (n, p) => format!(
                "; the caller talked over the bot {}: it fell silent in {} ms (p50)",
                crate::words::count(n, "time"),
                cell(p)
            ),
        }
    ));
    out.extend(v.network.as_ref().map(network_line));
    out.extend(
        (v.stages.is_some() || !r.mock_refused.is_empty())
            .then(|| stages_line(&v.stages.clone().unwrap_or_default(), &r.mock_refused)),
    );
    out.push(format!(
        "  the harness: its 20 ms frames went out late by {} ms at p99",
        cell(Some(v.frame_jitter_p99_ms))
    ));
    out
}

/// How the bot's audio broke: the stalls (the holes inside its audio among them).
fn audio_line(v: &result::VoiceCalls) -> String {
    let holes = match v.holes {
        0 => String::new(),
        n => format!(
            "; of that, {} of silence cutting into the replies' sound, {} ms in all, its packets on time: an output padding its dry queue (short of CPU), or audio cut and spliced",
            crate::words::count(n, "hole"),
            cell(Some(v.holes_ms))
        ),
    };
    format!(
        "  audio: {:.1} s from the bot, {:.2} % of it stalled ({} ms a turn, the longest gap {} ms; {:.0} % of turns stuttered{holes}); the callers spoke {:.1} s",
        v.bot_audio_s,
        v.stall_share * 100.0,
        cell(Some(v.stall_ms_per_turn)),
        cell(Some(v.longest_gap_ms)),
        v.stuttered_share * 100.0,
        v.caller_audio_s
    )
}

fn words_line(v: &result::VoiceCalls) -> String {
    let why = match v.holes {
        0 => "other audio, or damaged past reading",
        _ => "other audio, or damaged past reading: see the holes in the audio",
    };
    let unheard = match v.words_unheard {
        0 => String::new(),
        n => format!(
            "; {} not heard as the mock's voice ({why})",
            crate::words::count(n, "reply")
        ),
    };
    let sound = match (v.words_by_sound, v.words_wrong) {
        (0, _) => String::new(),
        (n, 0) => format!(" ({n} by their sound alone: too damaged to read)"),
        (n, _) => format!(
            "; {} on its own call by its sound alone (too damaged to read)",
            crate::words::count(n, "reply")
        ),
    };
    match v.words_wrong {
        0 => format!(
            "  words: {} heard, each on its own call{sound}{unheard}",
            crate::words::count(v.words_checked, "reply")
        ),
        n => format!(
            "  words: {n} of {} replies heard were another call's{}{sound}{unheard}",
            v.words_checked,
            crosstalk(&v.crosstalk)
        ),
    }
}

/// The replies heard on the wrong call, by name (the first three): whose reply, where,
/// along with that call's own, and whether its own call heard any reply at all.
fn crosstalk(c: &[result::Crosstalk]) -> String {
    let said: Vec<String> = c
        .iter()
        .take(3)
        .map(|x| {
            format!(
                "call {}'s reply was heard on call {}{}{}{}",
                x.owner,
                x.heard_on,
                match (x.with_own, x.by_sound) {
                    (true, false) => " along with that call's own",
                    (true, true) => " interleaved with that call's own",
                    (false, _) => "",
                },
                if x.by_sound {
                    " (found by its sound: cut too fine to read)"
                } else {
                    ""
                },
                match x.owner_heard_own {
                    true => String::new(),
                    false => format!(", and call {} heard none of its own", x.owner),
                }
            )
        })
        .collect();
    match (said.is_empty(), c.len() > 3) {
        (true, _) => String::new(),
        (false, false) => format!(": {}", said.join("; ")),
        (false, true) => format!(": {}; and {} more", said.join("; "), c.len() - 3),
    }
}

/// Where the calls' audio was kept, and what each file holds.
fn kept_line(k: &result::KeptAudio) -> String {
    let past = match k.left_out {
        0 => String::new(),
        n => format!(
            "; {} more not kept, past the cap of {} (step.keep_audio_calls)",
            crate::words::count(n, "call"),
            k.cap
        ),
    };
    let names = match k.calls.len() {
        0..=4 => k.calls.join(", "),
        n => format!("{} and {} more", k.calls[..3].join(", "), n - 3),
    };
    format!(
        "  audio kept: {} in {}/ ({names}): NAME.heard.wav is every sample the caller received, NAME.sent.wav what it said, NAME.txt where each turn and reply begins{past}",
        crate::words::count(k.calls.len() as u64, "call"),
        k.dir.trim_end_matches('/')
    )
}

/// Where to listen to a call that went wrong: its heard audio's file, when one was kept
/// (`prefer`'s, when it was kept too).
fn listen(v: &result::VoiceCalls, prefer: Option<&str>) -> String {
    let Some(k) = v.kept_audio.as_ref() else {
        return String::new();
    };
    let name = prefer
        .and_then(|p| k.calls.iter().find(|c| *c == p))
        .or(k.calls.first());
    match name {
        Some(name) => format!(
            "; listen to what a caller heard: {}/{name}.heard.wav",
            k.dir.trim_end_matches('/')
        ),
        None => String::new(),
    }
}

/// A WebRTC call's network part: setup split, and the bot's packets as received.
fn network_line(n: &result::VoiceNetwork) -> String {
    let agent = match n.agent_p50_ms {
        Some(ms) => format!(
            "; the agent ready {} ms after the room was made (p50; p99 {}, longest {}: dispatched, joined{}, subscribed to the caller, its voice published)",
            cell(Some(ms)),
            cell(n.agent_p99_ms),
            cell(n.agent_max_ms),
            match n.agent_joined_p50_ms {
                Some(j) => format!(" at {} ms", cell(Some(j))),
                None => String::new(),
            }
        ),
        None => String::new(),
    };
    format!(
        "  network: setup p50 {} ms signaling + {} ms ICE + {} ms DTLS{agent}; the bot's packets {} received, {} lost or late ({:.2} %), jitter p95 {} ms; the bot lost {} of the callers'",
        cell(n.signaling_p50_ms),
        cell(n.ice_p50_ms),
        cell(n.dtls_p50_ms),
        n.packets,
        n.packets_lost,
        n.lost_share() * 100.0,
        cell(n.jitter_p95_ms),
        n.lost_by_bot
    )
}

fn stages_line(s: &result::VoiceStages, refused: &result::MockRefusals) -> String {
    let and_refused = |what: &str| match refused.of(what) {
        0 => String::new(),
        n => format!(" and {n} refused"),
    };
    format!(
        "  the mock: {}{} (mean {} ms), {}{} (first byte mean {} ms), {} (first audio mean {} ms){}",
        crate::words::count(s.stt_calls, "transcription"),
        and_refused("transcription"),
        cell(s.stt_ms_mean),
        crate::words::count(s.tts_calls, "speech request"),
        and_refused("speech request"),
        cell(s.tts_first_byte_ms_mean),
        crate::words::count(s.realtime_responses, "Realtime response"),
        cell(s.realtime_response_ms_mean),
        match s.unheard {
            0 => String::new(),
            n => format!(
                "; it heard no words in {}",
                crate::words::count(n, "upload")
            ),
        }
    )
}

/// What `plimsoll check` says is wrong with a check's calls, beyond the failures each
/// call met: the bot's STT, LLM or TTS that did not reach the mock, replies whose words
/// were not the mock's voice, or another call's.
pub fn check_problems(r: &StepResult, v: &result::VoiceCalls) -> Vec<String> {
    let mut out = Vec::new();
    let st = v.stages.clone().unwrap_or_default();
    let realtime = st.realtime_responses > 0;
    if v.turns > 0 && st.stt_calls == 0 && !realtime {
        out.push("the bot answered without asking the mock to transcribe the caller: its speech-to-text is not the mock's, so the mock cannot hear which call spoke (point its STT at OPENAI_BASE_URL, which Plimsoll sets)".into());
    }
    if v.turns > 0 && st.tts_calls == 0 && !realtime {
        out.push("the bot spoke, but not with the mock's text-to-speech: replies cannot be checked against their calls (point its TTS at OPENAI_BASE_URL)".into());
    }
    if v.turns > 0 && v.words_checked == 0 && (st.tts_calls > 0 || realtime) {
        out.push(format!(
            "none of the {} replies carried words the mock spoke for the call: the bot's audio reached the caller changed past reading (resampled to another rate than the line's, or mixed with other audio?){}",
            v.turns, listen(v, None)
        ));
    }
    if r.sessions_ok > 0 && v.turns == 0 {
        out.push("the calls ended without one answered turn".into());
    }
    out
}

/// `plimsoll check`'s problem for replies heard on the wrong call, if any: the cause a
/// turn that timed out (its reply went elsewhere) and a failed turn follow from.
pub fn crosstalk_problem(v: &result::VoiceCalls) -> Option<String> {
    (v.words_wrong > 0).then(|| format!(
        "{} of {} replies were heard on another call than the one that asked{}: the bot mixed its calls up (a transcript, a context or an audio buffer shared between calls){}",
        v.words_wrong, v.words_checked, crosstalk(&v.crosstalk), listen(v, v.crosstalk.first().map(|c| c.heard_on.as_str()))
    ))
}

/// Under a turn that timed out, where a call's reply was heard on another call and that
/// call heard none of its own: what the timeout may follow from.
pub fn timed_out_for_crosstalk(v: Option<&result::VoiceCalls>) -> String {
    let Some(c) = v.and_then(|v| v.crosstalk.iter().find(|c| !c.owner_heard_own)) else {
        return String::new();
    };
    format!(
        "\n     if it is call {}'s, it follows from the cross-talk above: its reply was heard on call {}",
        c.owner, c.heard_on
    )
}

/// `plimsoll check`'s line for calls that went well.
pub fn all_well(r: &StepResult, v: &result::VoiceCalls) -> String {
    let st = v.stages.clone().unwrap_or_default();
    format!(
        "OK: {} answered in {} side by side, each reply heard on its own call ({} of {}); response p50 {} ms, p95 {} ms; {:.2} % of the replies' time stalled; the mock transcribed {}, answered {} and spoke {}; {:.1} MB peak RSS.",
        crate::words::count(v.turns, "turn"),
        crate::words::count(v.calls, "call"),
        v.words_checked,
        v.turns,
        cell(v.response_p50_ms),
        cell(v.response_p95_ms),
        v.stall_share * 100.0,
        crate::words::count(st.stt_calls, "time"),
        crate::words::count(r.llm_calls, "LLM call"),
        crate::words::count(st.tts_calls + st.realtime_responses, "time"),
        r.peak_rss_mb
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_inside_the_replies_are_said_with_the_stalls_and_the_unheard_words() {
        let v = result::VoiceCalls {
            bot_audio_s: 30.0,
            stall_share: 0.25,
            stall_ms_per_turn: 750.0,
            longest_gap_ms: 60.0,
            stuttered_share: 1.0,
            holes: 84,
            holes_ms: 2980.0,
            words_checked: 4,
            words_unheard: 4,
            ..Default::default()
        };
        assert_eq!(
            audio_line(&v),
            "  audio: 30.0 s from the bot, 25.00 % of it stalled (750 ms a turn, the longest gap 60.0 ms; 100 % of turns stuttered; of that, 84 holes of silence cutting into the replies' sound, 2980 ms in all, its packets on time: an output padding its dry queue (short of CPU), or audio cut and spliced); the callers spoke 0.0 s"
        );
        assert!(words_line(&v).ends_with("4 replies not heard as the mock's voice (other audio, or damaged past reading: see the holes in the audio)"), "{}", words_line(&v));
        // Replies damaged past reading whose sound is still their own call's.
        let v = result::VoiceCalls {
            words_checked: 6,
            words_by_sound: 2,
            ..Default::default()
        };
        assert_eq!(
            words_line(&v),
            "  words: 6 replies heard, each on its own call (2 by their sound alone: too damaged to read)"
        );
    }

    #[test]
    fn a_reply_on_the_wrong_call_is_named_with_what_its_own_call_heard() {
        let c = |on: &str, owner: &str, with_own, owner_heard_own| result::Crosstalk {
            heard_on: on.into(),
            owner: owner.into(),
            with_own,
            owner_heard_own,
            by_sound: false,
        };
        let v = result::VoiceCalls {
            words_checked: 3,
            words_wrong: 2,
            crosstalk: vec![c("s0", "s1", true, false), c("s1", "s0", false, true)],
            ..Default::default()
        };
        assert_eq!(
            words_line(&v),
            "  words: 2 of 3 replies heard were another call's: call s1's reply was heard on call s0 along with that call's own, and call s1 heard none of its own; call s0's reply was heard on call s1"
        );
        // Two replies interleaved piece by piece on one output: found by their sound.
        let v = result::VoiceCalls {
            words_checked: 1,
            words_wrong: 1,
            crosstalk: vec![result::Crosstalk {
                by_sound: true,
                ..c("s0", "s1", true, false)
            }],
            ..Default::default()
        };
        assert_eq!(
            words_line(&v),
            "  words: 1 of 1 replies heard were another call's: call s1's reply was heard on call s0 interleaved with that call's own (found by its sound: cut too fine to read), and call s1 heard none of its own"
        );
    }

    #[test]
    fn a_rooms_agent_is_said_with_its_p99_its_longest_and_when_it_joined() {
        let n = result::VoiceNetwork {
            signaling_p50_ms: Some(40.0),
            ice_p50_ms: Some(3.0),
            dtls_p50_ms: Some(5.0),
            agent_p50_ms: Some(1210.0),
            agent_p99_ms: Some(4480.0),
            agent_max_ms: Some(4502.0),
            agent_joined_p50_ms: Some(820.0),
            packets: 100,
            ..Default::default()
        };
        let line = network_line(&n);
        assert!(
            line.contains("; the agent ready 1210 ms after the room was made (p50; p99 4480, longest 4502: dispatched, joined at 820 ms, subscribed to the caller, its voice published)"),
            "{line}"
        );
    }
}
