"""Real voice activity detectors hear the synthetic voice as speech and its silences as
silence: Silero VAD (the ONNX model Pipecat 1.14 ships, run with onnxruntime as Pipecat
runs it: 512-sample windows at 16 kHz with 64 samples of context) and WebRTC VAD
(webrtcvad-wheels, the most aggressive mode), over the voice as the mock speaks it (24 kHz),
down a phone line (µ-law at 8 kHz) and resampled to 16 kHz. The voice is the same one
Plimsoll's callers speak; the mock's speech is how the test gets it.
"""

import os

import numpy as np
import onnxruntime
import pipecat
import pytest
import soxr
import webrtcvad

from conftest import Mock
from test_audio import VOICE, marker, pcm_of, phone

import openai

SILERO = os.path.join(os.path.dirname(pipecat.__file__), "audio", "vad", "data", "silero_vad.onnx")

TURNS = [
    marker("vad-s0"),
    "Sure, I can help with that. What is your order number?",
    "The agent plans a careful answer with tools and memory, so we test again before shipping results to users.",
]


def silero(x16):
    """Speech probability per 32 ms window of 16 kHz audio."""
    opts = onnxruntime.SessionOptions()
    opts.inter_op_num_threads = opts.intra_op_num_threads = 1
    sess = onnxruntime.InferenceSession(SILERO, sess_options=opts, providers=["CPUExecutionProvider"])
    state, ctx = np.zeros((2, 1, 128), np.float32), np.zeros(64, np.float32)
    sr = np.array(16000, np.int64)
    x = x16.astype(np.float32)
    out = []
    for i in range(len(x) // 512):
        w = x[i * 512:(i + 1) * 512]
        p, state = sess.run(None, {"input": np.concatenate([ctx, w])[None, :], "state": state, "sr": sr})
        out.append(float(p.reshape(-1)[0]))
        ctx = w[-64:]
    return np.array(out)


def webrtc(x, rate, mode=3):
    """WebRTC VAD's decision per 20 ms frame."""
    v = webrtcvad.Vad(mode)
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    n = rate // 50
    return np.array([v.is_speech(pcm[i * n:(i + 1) * n].tobytes(), rate) for i in range(len(pcm) // n)])


@pytest.fixture(scope="module")
def call():
    """Three turns of the voice at 24 kHz with 1.5 s of silence before, between and after;
    where each turn speaks (seconds)."""
    m = Mock(VOICE)
    try:
        client = openai.OpenAI(base_url=m.base + "/v1", api_key="dummy", max_retries=0)
        parts, spans, t = [np.zeros(36000)], [], 1.5
        for text in TURNS:
            v = pcm_of(client, text)
            spans.append((t, t + len(v) / 24000))
            parts += [v, np.zeros(36000)]
            t += len(v) / 24000 + 1.5
        yield np.concatenate(parts), spans
    finally:
        m.stop()


def inside(times, spans, margin):
    """Which frame times fall inside a turn (shrunk by `margin`), and which in the silence
    between (kept `margin` away from any turn)."""
    speech = np.array([any(a + margin <= t <= b - margin for a, b in spans) for t in times])
    quiet = np.array([all(t < a - margin or t > b + margin for a, b in spans) for t in times])
    return speech, quiet


@pytest.mark.parametrize("channel", ["raw 24 kHz", "phone: µ-law 8 kHz", "phone, back up to 16 kHz"])
def test_silero_and_webrtc_hear_speech_where_the_voice_speaks_and_silence_between(call, channel):
    x24, spans = call
    x = {"raw 24 kHz": x24, "phone: µ-law 8 kHz": phone(x24, 24000, 8000), "phone, back up to 16 kHz": phone(x24, 24000, 16000)}[channel]
    rate = {"raw 24 kHz": 24000, "phone: µ-law 8 kHz": 8000, "phone, back up to 16 kHz": 16000}[channel]
    x16 = soxr.resample(x, rate, 16000) if rate != 16000 else x
    p = silero(x16)
    speech, quiet = inside((np.arange(len(p)) + 0.5) * 0.032, spans, 0.25)
    assert p[speech].mean() >= 0.8, f"Silero heard speech {p[speech].mean():.2f} on average inside the turns"
    assert (p[speech] > 0.5).mean() >= 0.8, f"{(p[speech] > 0.5).mean():.0%} of windows inside the turns above 0.5"
    assert (p[quiet] > 0.5).mean() == 0.0, "Silero heard speech in the silence between turns"
    for vad_rate in (8000, 16000):
        xv = soxr.resample(x, rate, vad_rate) if rate != vad_rate else x
        f = webrtc(xv, vad_rate)
        s, q = inside((np.arange(len(f)) + 0.5) * 0.02, spans, 0.1)
        assert f[s].mean() >= 0.9, f"WebRTC at {vad_rate} Hz flagged {f[s].mean():.0%} of frames inside the turns"
        assert f[q].mean() <= 0.02, f"WebRTC at {vad_rate} Hz flagged {f[q].mean():.0%} of the silence"
