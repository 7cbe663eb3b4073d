"""The mock's audio APIs through the official `openai` SDK: speech (plain, streamed raw and
as SSE), transcriptions (json, text, verbose_json, streamed), and a Realtime session that
hears the synthetic voice, tells speech_started / speech_stopped, answers with audio and a
transcript, and calls a function. The words the voice carries come back as the transcript;
a call's audio spoken into another call's conversation is an isolation violation; bad input
gets the API's error and the mock stays up.
"""

import base64
import io
import json
import socket
import threading
import time
import urllib.request
import wave

import numpy as np
import openai
import pytest
import soxr
import websockets

from apps.g711 import ulaw, unulaw, wav_bytes
from conftest import Mock, get_json

# Speech at 40 characters a second: the voice's natural pace (no stretched pauses), so the
# mock's speech can stand in for a caller's voice.
VOICE = """
[defaults]
ttft_ms = 50
tok_ms = 1
output_tokens = 24
[models."gpt-4o-mini-tts"]
[models."gpt-4o-transcribe"]
[models."whisper-1"]
[models."gpt-realtime"]
[audio]
chars_per_s = 40
tts_first_byte_ms = 120
tts_speed = 4
chunk_ms = 100
stt_ms = 80
stt_rtf = 0.05
"""


def marker(session, turn=1, nonce="0123456789abcdef"):
    return f"[[plimsoll session={session} nonce=psn{nonce} turn={turn}]] Please handle turn {turn}."


@pytest.fixture(scope="module")
def vm():
    m = Mock(VOICE)
    yield m
    m.stop()


@pytest.fixture
def client(vm):
    return openai.OpenAI(base_url=vm.base + "/v1", api_key="dummy", max_retries=0)


def pcm_of(client, text):
    """The mock's speech of `text`: 24 kHz 16-bit mono samples in [-1, 1]."""
    raw = client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input=text, response_format="pcm").content
    return np.frombuffer(raw, "<i2").astype(np.float64) / 32768.0


def phone(x, rate_in, rate_out):
    """Down a phone line and back up: to 8 kHz, µ-law and back, then to `rate_out`."""
    line = unulaw(ulaw(soxr.resample(x, rate_in, 8000)))
    return soxr.resample(line, 8000, rate_out)


def test_speech_lasts_as_its_text_takes_and_streams_raw_and_as_sse():
    """At 10 characters a second (far slower than the voice's own ~19), 73 characters
    last longer than the voice's own pace, but not 7.3 s: the pauses lengthen and at most
    0.3 s of silence follows (a TTS sentence ending in seconds of silence would play as a
    stall between sentences); the first byte after 120 ms; the rest 4 times faster than
    it plays."""
    m = Mock(VOICE.replace("chars_per_s = 40", "chars_per_s = 10"))
    try:
        speech_at_ten(openai.OpenAI(base_url=m.base + "/v1", api_key="dummy", max_retries=0))
    finally:
        m.stop()


def speech_at_ten(client):
    text = "Sure, I can help with that. Your order ships today and arrives on Friday."
    # The speech is made once and kept: asked for first, its pacing is read on its second
    # asking. Made while the clock ran, a busy machine's synthesis (1.3 s, CI 2026-12-04)
    # outlasts the whole schedule and every chunk leaves at once, as a mock that held the
    # audio back would send it.
    client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input=text, response_format="pcm")
    t0 = time.monotonic()
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input=text, response_format="pcm"
    ) as r:
        assert r.headers["content-type"].startswith("audio/pcm")
        first, data = None, b""
        for b in r.iter_bytes(4800):
            first = first or time.monotonic() - t0
            data += b
    seconds = len(data) / 48000
    assert len(text) / 25 < seconds < len(text) / 10, seconds
    samples = np.frombuffer(data, "<i2")
    tail = np.argmax(np.abs(samples[::-1]) > 3) / 24000
    assert tail <= 0.31, tail
    # The first byte comes before the rest: ~0.12 s of the ~0.75 s it all took on a quiet
    # machine; a mock that held the audio back until it was whole would send its first byte
    # at the end. A ratio, not a bound in seconds: a busy machine slows both (0.67 s for the
    # first byte beside a cold build, 2026-12-02).
    elapsed = time.monotonic() - t0
    assert first >= 0.10 and first < 0.6 * elapsed, (first, elapsed)
    # Streamed 4 times faster than it plays (seconds / 4 on a quiet machine). The bound is
    # twice that and 0.8 s: speech streamed at its own pace (seconds, 2.9 s or more here)
    # still crosses it, a busy machine's slower synthesis does not.
    assert elapsed < seconds / 2 + 0.8
    wav = client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input=text, response_format="wav").content
    with wave.open(io.BytesIO(wav)) as w:
        assert (w.getframerate(), w.getsampwidth(), w.getnchannels()) == (24000, 2, 1)
        assert w.getnframes() * 2 == len(data)
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input=text, response_format="pcm", stream_format="sse"
    ) as r:
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    deltas = [e for e in events if e["type"] == "speech.audio.delta"]
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["output_tokens"] > 0
    assert b"".join(base64.b64decode(e["audio"]) for e in deltas) == data


def mp3_samples(data):
    """MP3 as FFmpeg decodes it (PyAV, as LiveKit's plugin decodes it): samples in [-1, 1],
    each frame checked to be 24 kHz mono."""
    import av

    frames = []
    with av.open(io.BytesIO(data), format="mp3") as f:
        for fr in f.decode(audio=0):
            assert (fr.sample_rate, fr.layout.nb_channels) == (24000, 1)
            frames.append(fr.to_ndarray().reshape(-1))
    return np.concatenate(frames).astype(np.float64)


def test_mp3_the_default_format_carries_the_words_raw_and_as_sse(client):
    """No response_format: mp3, as the API and LiveKit's OpenAI plugin default to. FFmpeg
    decodes it to 24 kHz mono that plays as long as the pcm of the same text (plus the
    encoder's delay) and whose words the mock hears back; SSE carries the same bytes."""
    text = "Your table for two is booked for eight tonight."
    with client.audio.speech.with_streaming_response.create(model="gpt-4o-mini-tts", voice="alloy", input=text) as r:
        assert r.headers["content-type"] == "audio/mpeg"
        data = r.read()
    assert data[:2] == b"\xff\xf3", data[:4]  # an MPEG-2 Layer III frame first: no ID3 tag
    x = mp3_samples(data)
    pcm = pcm_of(client, text)
    assert len(pcm) <= len(x) <= len(pcm) + 4 * 576, (len(x), len(pcm))
    heard = client.audio.transcriptions.create(model="whisper-1", file=("mp3.wav", wav_bytes(x, 24000), "audio/wav"))
    assert heard.text == text
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input=text, stream_format="sse"
    ) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    deltas = [base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta"]
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["output_tokens"] > 0
    assert b"".join(deltas) == data
    assert all(len(d) % 480 == 0 for d in deltas[:-1]), [len(d) for d in deltas]


def decoded(data, container):
    """Audio as FFmpeg decodes it (PyAV): mono samples in [-1, 1], and their rate."""
    import av

    frames, rates = [], set()
    with av.open(io.BytesIO(data), format=container) as f:
        for fr in f.decode(audio=0):
            assert fr.layout.nb_channels == 1
            rates.add(fr.sample_rate)
            x = fr.to_ndarray().reshape(-1)
            frames.append(x / 32768.0 if x.dtype == np.int16 else x)
    assert len(rates) == 1, rates
    return np.concatenate(frames).astype(np.float64), rates.pop()


@pytest.mark.parametrize("fmt, container, content_type, magic", [
    ("opus", "ogg", "audio/opus", b"OggS"),
    ("flac", "flac", "audio/flac", b"fLaC"),
    ("wav", "wav", "audio/wav", b"RIFF"),
])
def test_every_format_the_api_names_carries_the_words_raw_and_as_sse(client, fmt, container, content_type, magic):
    """opus (Ogg Opus), flac and wav as the SDK asks for them: FFmpeg decodes each to the
    speech's own length (Opus with its pre-skip and end trimmed: within a packet; FLAC and
    WAV sample for sample), the mock hears its words back, and SSE carries the same bytes."""
    text = "Your table for two is booked for eight tonight."
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input=text, response_format=fmt
    ) as r:
        assert r.headers["content-type"] == content_type
        data = r.read()
    assert data[:4] == magic, data[:8]
    x, rate = decoded(data, container)
    pcm = pcm_of(client, text)
    if fmt == "opus":
        assert rate == 48000, rate  # FFmpeg decodes Opus at 48 kHz, whatever the input's rate
        x = soxr.resample(x, 48000, 24000)
        assert abs(len(x) - len(pcm)) <= 480, (len(x), len(pcm))
    else:
        assert rate == 24000 and len(x) == len(pcm), (rate, len(x), len(pcm))
        assert np.array_equal(np.round(x * 32768), np.round(pcm * 32768)), "lossless"
    heard = client.audio.transcriptions.create(model="whisper-1", file=(f"{fmt}.wav", wav_bytes(x, 24000), "audio/wav"))
    assert heard.text == text
    with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="alloy", input=text, response_format=fmt, stream_format="sse"
    ) as r:
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    deltas = [base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta"]
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["output_tokens"] > 0
    assert len(deltas) > 1 and b"".join(deltas) == data


def test_a_transcription_is_the_words_the_voice_carried(client):
    text = marker("stt-s0")
    audio = wav_bytes(pcm_of(client, text), 24000)
    t = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("turn.wav", audio, "audio/wav"))
    assert t.text == text
    assert t.usage.type == "tokens" and t.usage.input_token_details.audio_tokens > 0
    plain = client.audio.transcriptions.create(model="whisper-1", file=("turn.wav", audio, "audio/wav"), response_format="text")
    assert plain == text
    v = client.audio.transcriptions.create(model="whisper-1", file=("turn.wav", audio, "audio/wav"), response_format="verbose_json")
    assert v.text == text and v.duration > 1 and v.words[0].word == "[[plimsoll"
    stream = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("turn.wav", audio, "audio/wav"), stream=True)
    events = list(stream)
    assert [e.type for e in events][-1] == "transcript.text.done"
    assert "".join(e.delta for e in events if e.type == "transcript.text.delta") == text
    assert events[-1].text == text


def encoded(x, rate, container, codec, out_rate):
    """Mono samples at `rate` encoded by FFmpeg (PyAV) as `codec` at `out_rate` in
    `container`: a file as a recorder or an encoder of a client writes it."""
    import av

    buf = io.BytesIO()
    with av.open(buf, "w", format=container) as out:
        s = out.add_stream(codec, rate=out_rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(
            np.round(x * 32767).astype(np.int16).reshape(1, -1), format="s16", layout="mono"
        )
        frame.sample_rate = rate
        for packet in [*s.encode(frame), *s.encode(None)]:
            out.mux(packet)
    return buf.getvalue()


@pytest.mark.parametrize("name, container, codec, rate", [
    ("turn.mp3", "mp3", "libmp3lame", 24000),
    ("turn.flac", "flac", "flac", 16000),
    ("turn.m4a", "mp4", "aac", 24000),
    ("turn.ogg", "ogg", "libopus", 48000),
    ("turn.webm", "webm", "libopus", 48000),
])
def test_an_upload_in_the_containers_clients_send_is_heard(client, name, container, codec, rate):
    """What the API's transcription takes besides WAV (mp3, FLAC, AAC in m4a, Opus in Ogg and
    in WebM, a browser's MediaRecorder default), encoded by FFmpeg: the marker comes back.
    The SDK sends the file as given, no content type of its own."""
    text = marker("upload-s2", turn=3)
    data = encoded(pcm_of(client, text), 24000, container, codec, rate)
    t = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=(name, data))
    assert t.text == text


def test_an_upload_the_mock_cannot_read_is_refused_naming_what_it_reads(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.audio.transcriptions.create(model="whisper-1", file=("turn.mp3", b"ID3 not really an mp3 at all" * 8))
    msg = str(e.value)
    assert "is not audio this mock reads" in msg and "m4a/mp4 (AAC)" in msg and "webm (Opus" in msg, msg


def test_a_marker_survives_a_phone_line_round_trip(client):
    """The mock's speech of a marked text, down a phone line (µ-law at 8 kHz) and back up
    to 16 kHz, transcribed by the mock: the marker comes back."""
    text = marker("phone-s3", turn=7, nonce="fedcba9876543210")
    line = phone(pcm_of(client, text), 24000, 16000)
    t = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("call.wav", wav_bytes(line, 16000), "audio/wav"))
    assert t.text == text
    # Raw µ-law at 8 kHz is read too.
    u = ulaw(soxr.resample(pcm_of(client, text), 24000, 8000)).tobytes()
    t = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("call.ulaw", u, "audio/basic"))
    assert t.text == text


def realtime_turn(conn, audio_24k):
    """Appends the caller's audio with a second of silence either side, in 100 ms chunks."""
    silence = np.zeros(24000)
    x = np.concatenate([silence, audio_24k, silence])
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2").tobytes()
    for i in range(0, len(pcm), 4800):
        conn.input_audio_buffer.append(audio=base64.b64encode(pcm[i:i + 4800]).decode())


def events(conn, seen, limit_s=60):
    """The connection's events, each type put in `seen`; a session that goes quiet
    before the test has what it waits for fails in `limit_s` naming what came, where a
    bare `for ev in conn` waits for ever."""
    timer = threading.Timer(limit_s, conn.close)
    timer.start()
    try:
        for ev in conn:
            seen.append(ev.type)
            yield ev
    except websockets.exceptions.ConnectionClosed:
        pytest.fail(f"the mock said nothing more for {limit_s} s; the events so far: {seen}")
    finally:
        timer.cancel()


def test_a_realtime_session_hears_the_voice_answers_with_audio_and_calls_a_function(client, vm):
    text = marker("rt-s0")
    voice = pcm_of(client, text)
    seen, audio, transcript, call = [], b"", "", None
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.session.update(session={
            "type": "realtime",
            "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}},
            "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}],
        })
        realtime_turn(conn, voice)
        for ev in events(conn, seen):
            if ev.type == "input_audio_buffer.speech_stopped":
                assert ev.audio_end_ms > 1000
            if ev.type == "conversation.item.input_audio_transcription.completed":
                assert ev.transcript == text
            if ev.type == "response.output_audio.delta":
                audio += base64.b64decode(ev.delta)
            if ev.type == "response.output_audio_transcript.done":
                transcript = ev.transcript
            if ev.type == "response.function_call_arguments.done":
                call = ev
            if ev.type == "response.done":
                assert ev.response.status == "completed"
                if call is not None and ev.response.output[-1].type == "function_call":
                    conn.conversation.item.create(item={"type": "function_call_output", "call_id": call.call_id, "output": "42"})
                    conn.response.create()
                    continue
                break
    for t in ["session.created", "session.updated", "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
              "input_audio_buffer.committed", "response.created", "response.output_audio.delta", "response.done"]:
        assert t in seen, (t, seen)
    assert call is not None and call.name == "lookup" and json.loads(call.arguments)
    # The reply's audio carries its transcript.
    heard = client.audio.transcriptions.create(model="gpt-4o-transcribe", file=("r.wav", wav_bytes(np.frombuffer(audio, "<i2") / 32768.0, 24000), "audio/wav"))
    assert transcript and heard.text == transcript
    ledger = get_json(vm.base, "/plimsoll/ledger")
    rt = ledger["sessions"]["rt-s0"]["voice"]
    assert rt["realtime_responses"] == 1 and rt["heard_s"] > 1 and rt["spoken_s"] > 1
    assert ledger["sessions"]["rt-s0"]["integrity_violations"] == 0
    with urllib.request.urlopen(vm.base + "/metrics", timeout=5) as r:
        metrics = r.read().decode()
    realtime = [line for line in metrics.splitlines() if line.startswith('plimsoll_mock_audio_calls_total{api="realtime"}')]
    assert realtime and float(realtime[0].split()[-1]) >= 1, metrics
    assert "plimsoll_mock_audio_frame_lateness_seconds_count" in metrics


def test_a_response_asked_for_the_moment_the_last_one_ended_is_answered(client, vm):
    """A client that reads `response.done` may start the next response at once: the mock
    never answers it 'already has an active response' (CI 2026-12-04 waited 600 s on one)."""
    seen = []
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        conn.conversation.item.create(item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": marker("rt-next")}]})
        conn.response.create()
        done = 0
        for ev in events(conn, seen):
            assert ev.type != "error", ev
            if ev.type == "response.done":
                assert ev.response.status == "completed", ev
                done += 1
                if done == 20:
                    break
                conn.response.create()
    assert done == 20, seen


def test_a_calls_audio_in_another_calls_conversation_is_an_isolation_violation(client, vm):
    """Two calls; the second turn of call B carries call A's voice (swapped audio): the
    oracle names the cross-session violation."""
    a1, b1 = pcm_of(client, marker("swap-a")), pcm_of(client, marker("swap-b"))
    a2 = pcm_of(client, marker("swap-a", turn=2))
    before = get_json(vm.base, "/plimsoll/ledger")["totals"]["violations_by_kind"].get("isolation", 0)
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        for voice in (b1, a2):
            realtime_turn(conn, voice)
            for ev in events(conn, []):
                if ev.type == "response.done":
                    break
    del a1
    ledger = get_json(vm.base, "/plimsoll/ledger")
    assert ledger["totals"]["violations_by_kind"].get("isolation", 0) > before, ledger["totals"]
    found = [v for v in ledger["violations"] if v["kind"] == "isolation" and v["session"] == "swap-b"]
    assert found and "swap-a" in found[0]["detail"], ledger["violations"]


def raw_http(vm, data: bytes) -> bytes:
    host, port = vm.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(data)
        try:
            return s.recv(4096)
        except OSError:
            return b""


def test_bad_input_gets_the_apis_error_and_the_mock_stays_up(client, vm):
    with pytest.raises(openai.BadRequestError) as e:
        client.audio.speech.create(model="gpt-4o-mini-tts", voice="alloy", input="hi", response_format="aac")
    assert ("\"aac\" is not produced by this mock (it has no AAC encoder); it produces \"mp3\" (the default), "
            "\"opus\" (Ogg), \"flac\", \"pcm\"") in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        client.audio.transcriptions.create(model="whisper-1", file=("notes.txt", b"plain text, no audio", "text/plain"))
    assert "Invalid file format" in e.value.message
    wav = wav_bytes(pcm_of(client, "hello there"), 24000)
    with pytest.raises(openai.BadRequestError) as e:
        client.audio.transcriptions.create(model="whisper-1", file=("cut.wav", wav[: len(wav) // 2], "audio/wav"))
    assert "truncated" in e.value.message
    # A 200 MB upload is refused by its declared length, before it is read …
    head = (b"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=xx\r\n"
            b"Content-Length: 209715200\r\n\r\n--xx\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.wav\"\r\n\r\n")
    answer = raw_http(vm, head + b"\0" * 65536)
    assert answer.startswith(b"HTTP/1.1 413") and b"Maximum content size limit" in answer, answer[:300]
    # … and through the SDK (which sends it all): refused, one way or the other.
    with pytest.raises(openai.APIError):
        client.audio.transcriptions.create(model="whisper-1", file=("big.wav", b"\0" * (200 * 1024 * 1024), "audio/wav"))
    # Realtime: base64 garbage is an error event; the socket stays open and works.
    with client.realtime.connect(model="gpt-realtime") as conn:
        conn.input_audio_buffer.append(audio="%%% not base64 %%%")
        errs = []
        for ev in events(conn, []):
            if ev.type == "error":
                errs.append(ev.error)
                conn.session.update(session={"type": "realtime"})
            if ev.type == "session.updated":
                break
        assert errs and errs[0].param == "audio" and "base64" in errs[0].message
    # A client that never sends session.update still gets its session.
    with client.realtime.connect(model="gpt-realtime") as conn:
        first = conn.recv()
        assert first.type == "session.created" and first.session.audio.input.format.rate == 24000
    # Random bytes on /v1/realtime: an HTTP error, or a closed socket — never a dead mock.
    assert raw_http(vm, b"GET /v1/realtime?model=x HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 400")
    raw_http(vm, bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8)))
    with urllib.request.urlopen(vm.base + "/health", timeout=5) as r:
        assert json.loads(r.read())["status"] == "ok"
    assert client.audio.transcriptions.create(model="whisper-1", file=("ok.wav", wav, "audio/wav")).text == "hello there"
