"""What the voice-call conformance tests share: the mock's scenario for a bot's STT, LLM
and TTS, a `plimsoll` command run from a config's directory with its RESULT read, and a
config for the Twilio bot (apps/voice_bot.py) in a directory of its own."""

import json
import pathlib
import re
import subprocess
import sys

from conftest import BIN, ROOT

APPS = ROOT / "tests" / "conformance" / "apps"

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


def bot_dir(tmp, *, turns=2, protocol="twilio", voice_extra="", bug="", block_ms=8):
    """A config for apps/voice_bot.py in a directory of its own."""
    d = pathlib.Path(tmp)
    (d / "scenario.toml").write_text(SCENARIO)
    path = "/pcm" if protocol == "pcm-ws" else "/ws"
    (d / "session.toml").write_text(f"""
protocol = "{protocol}"
url = "{{{{ws_base}}}}{path}"
turns = {turns}
think_ms = 300
turn_timeout_ms = 30000
[voice]
answer_timeout_ms = 6000
reply_end_ms = 700
{voice_extra}
""")
    env = f'env = {{ AGENT_BUG = "{bug}", BLOCK_MS = "{block_ms}" }}' if bug else ""
    (d / "plimsoll.toml").write_text(f"""
[sut]
command = ["{sys.executable}", "{APPS / 'voice_bot.py'}"]
ready = "http"
ready_path = "/health"
ready_timeout_s = 30
{env}
[mock]
scenario = "scenario.toml"
[session]
file = "session.toml"
[step]
concurrency = 2
timeout_s = 120
probe_path = "/health"
""")
    return d
