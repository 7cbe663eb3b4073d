"""What the voice-call conformance tests share: the mock's scenario for a bot's STT, LLM
and TTS, and a `plimsoll` command run from a config's directory with its RESULT read."""

import json
import re
import subprocess

from conftest import BIN

SCENARIO = """
seed = 1
[defaults]
ttft_ms = 150
tok_ms = 5
output_tokens = [14, 20]
[audio]
stt_ms = 60
stt_rtf = 0.02
tts_first_byte_ms = 80
"""


def run(d, *args):
    p = subprocess.run([BIN, *args], cwd=d, capture_output=True, text=True, timeout=900)
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    doc = json.loads(lines[-1][7:]) if lines else None
    if doc is None and p.stdout.strip().startswith("{"):
        doc = json.loads(p.stdout)
    return p, doc


def verdict(headline):
    """What a headline says of the system, read past a busy machine: a step others took a
    share of is re-run, and when it stays busy the headline begins "machine busy at N (…) —
    " and says "holds at least N". That is the machine's doing, not the bot's, and the
    judgement of calls after it is the same."""
    said = re.sub(r"^machine busy at \d+ \([^)]*\) — ", "", headline)
    return said.replace("holds at least ", "holds ", 1)
