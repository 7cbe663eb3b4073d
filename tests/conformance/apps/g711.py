"""Telephone audio for the conformance tests and their voice bot: G.711 µ-law (the
standard's segment formula) and 16-bit mono WAV, from and to samples in [-1, 1]."""

import io
import wave

import numpy as np


def ulaw(x) -> np.ndarray:
    """µ-law bytes (as uint8) of samples in [-1, 1]."""
    s = np.clip(np.round(np.asarray(x) * 32767), -32768, 32767).astype(np.int32)
    sign = np.where(s < 0, 0x80, 0)
    v = np.minimum(np.abs(s), 32635) + 0x84
    exp = np.clip(np.floor(np.log2(v)).astype(np.int32) - 7, 0, 7)
    mant = (v >> (exp + 3)) & 0x0F
    return (~(sign | (exp << 4) | mant) & 0xFF).astype(np.uint8)


def unulaw(u) -> np.ndarray:
    """Samples in [-1, 1] of µ-law bytes (bytes or a uint8 array)."""
    if isinstance(u, (bytes, bytearray)):
        u = np.frombuffer(u, np.uint8)
    u = (~u.astype(np.int32)) & 0xFF
    sign, exp, mant = u & 0x80, (u >> 4) & 7, u & 0x0F
    x = (((mant << 3) + 0x84) << exp) - 0x84
    return np.where(sign != 0, -x, x).astype(np.float64) / 32768.0


def wav_bytes(x, rate: int) -> bytes:
    """A 16-bit mono WAV file of samples in [-1, 1]."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.clip(np.round(np.asarray(x) * 32767), -32768, 32767).astype("<i2").tobytes())
    return buf.getvalue()
