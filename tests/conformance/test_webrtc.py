"""Voice calls over WebRTC, end to end: Plimsoll places each call as a browser does —
its offer signalled as Pipecat's SmallWebRTC or WHIP takes one, ICE on loopback,
DTLS-SRTP, Opus both ways — to apps/webrtc_bot.py, voice_bot.py's agent (energy VAD,
OpenAI STT, LLM and TTS against the mock) met over aiortc, the stack under Pipecat's
SmallWebRTC. Checked: a clean bot over both signalings (replies, words, the network's
part); a reply routed to another call caught by the words (exit 3); an event loop blocked
by per-frame work named as the wall; each bad input one line, no panic, the other calls
going on.
"""

import pathlib
import re
import shutil
import sys
import tempfile

import pytest

from conftest import ROOT, example_copy
from voice_calls_common import SCENARIO, run, verdict

pytest.importorskip("aiortc")

APPS = ROOT / "tests" / "conformance" / "apps"


def bot_dir(tmp, *, turns=2, signaling="pipecat", bug="", block_ms=8, concurrency=2):
    d = pathlib.Path(tmp)
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenario.toml").write_text(SCENARIO)
    path = "/whip" if signaling == "whip" else "/api/offer"
    (d / "session.toml").write_text(f"""
protocol = "webrtc"
url = "{{{{base}}}}{path}"
turns = {turns}
think_ms = 300
turn_timeout_ms = 30000
[voice]
signaling = "{signaling}"
answer_timeout_ms = 6000
reply_end_ms = 700
""")
    env = f'env = {{ AGENT_BUG = "{bug}", BLOCK_MS = "{block_ms}" }}' if bug else ""
    (d / "plimsoll.toml").write_text(f"""
[sut]
command = ["{sys.executable}", "{APPS / 'webrtc_bot.py'}"]
ready = "http"
ready_path = "/health"
ready_timeout_s = 30
{env}
[mock]
scenario = "scenario.toml"
[session]
file = "session.toml"
[step]
concurrency = {concurrency}
timeout_s = 120
probe_path = "/health"
""")
    return d


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="plimsoll-webrtc-")
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("signaling", ["pipecat", "whip"])
def test_a_clean_bot_is_heard_call_by_call_over_webrtc(tmp, signaling):
    d = bot_dir(tmp, signaling=signaling)
    p, r = run(d, "run")
    assert p.returncode == 0, p.stderr
    v = r["voice"]
    assert v["protocol"] == "webrtc" and v["calls"] == 2 and v["dropped"] == 0, v
    assert v["turns"] == 4 and v["words_checked"] == 4 and v["words_wrong"] == 0, v
    # The mock's STT, LLM and TTS, the bot's 500 ms of silence, and the wire: not instant,
    # and not a clock read from the wrong end of the turn. Not a latency bound: beside the
    # Rust tests' build on the 2-core Xeon the p50 was 2,814 ms (CI, 2026-12-03), about 1 s
    # on a quiet machine.
    assert 300 < v["response_p50_ms"] < 6000, v
    assert v["stall_share"] < 0.05, v
    n = v["network"]
    # Each call is ~12 s of the bot's 20 ms frames: hundreds of packets, none lost on loopback.
    assert n["packets"] > 400 and n["packets_lost"] <= 0.01 * n["packets"], n
    assert n["signaling_p50_ms"] > 0 and n["dtls_p50_ms"] > 0 and n["jitter_p95_ms"] is not None, n
    assert "over WebRTC (Opus)" in p.stderr and "network: setup p50" in p.stderr, p.stderr
    assert "each on its own call" in p.stderr


def test_a_reply_routed_to_another_call_is_caught_by_the_words(tmp):
    d = bot_dir(tmp, bug="cross")
    p, r = run(d, "run")
    assert p.returncode == 3, p.stderr
    assert r["voice"]["words_wrong"] >= 1, r["voice"]
    # Named on the call that heard it, or (where that call's own turn failed first, as a
    # busy machine's 6 s timeout makes it: CI 2026-12-04) on the words line.
    assert "heard the reply to call" in p.stderr or "'s reply was heard on call" in p.stderr, p.stderr


@pytest.mark.quiet
def test_a_blocked_event_loop_is_named_as_the_wall(tmp):
    """10 ms of event-loop work on each 20 ms frame heard: one call takes half the loop and
    holds; two fill it (aiortc's own decoding and encoding share the loop) and the callers
    hear it. The wall is the one thread. (At 8 ms two calls filled the loop only on a quiet
    day: 'over at 2, nothing full' on a busy one. The budget on response time is eased to
    2.5 s: this bot answers in 1.2–1.6 s at p95 with the loop half free, and this test is of
    the wall, not of the bot's pace. Two levels: at a third the calls fail, which took 40 s
    and judged nothing more; the wall read before a collapse is test_voice_calls.py's. One
    turn a call: 37 s where two took 67, and the same verdict.)"""
    d = bot_dir(tmp, turns=1, bug="block", block_ms=10)
    p, doc = run(d, "ramp", "--ladder", "1,2", "--cpus", "2", "--no-partition", "--no-history",
                 "--budget", "response_p95_ms=2500", "--json")
    assert doc, p.stderr
    v = doc["analysis"]["verdict"]
    if v["holds"] is None:
        pytest.skip(f"not even 1 call held (a busy machine): {v['headline']}")
    assert verdict(v["headline"]).startswith("holds ") and "session" not in v["headline"], v["headline"]
    w = v["wall"]
    assert w["kind"] == "thread", (w, p.stderr)
    assert w["short"].startswith("one thread (the main thread of"), w


@pytest.mark.parametrize(
    "bug, words",
    [
        ("noaudio", "the answer has no Opus audio track"),
        ("badsdp", "the answer's SDP does not parse"),
        ("badice", "ICE and DTLS not done 6000 ms after the answer"),
        ("baddtls", "DTLS"),
        ("badopus", "an Opus payload that does not decode"),
        ("mute", "the bot never answered within 6000 ms"),
        ("hangup", "the bot's side of the call went away"),
    ],
)
def test_each_bad_input_is_one_line_and_the_run_goes_on(tmp, bug, words):
    d = bot_dir(tmp, turns=1, bug=bug)
    p, r = run(d, "run")
    assert p.returncode != 0, p.stderr
    assert words in p.stderr, p.stderr
    assert "panicked" not in p.stderr
    lines = [l for l in p.stderr.splitlines() if words in l]
    assert all(len(l) < 400 for l in lines), lines
    # Every call ended, none left hanging: both were counted.
    assert r["sessions_ok"] + r["sessions_failed"] == 2, r


@pytest.mark.quiet
@pytest.mark.pairs
def test_the_pipecat_webrtc_example_checks_clean_from_its_own_install(tmp):
    """examples/pipecat-webrtc as its header installs it (a venv of its requirements.txt
    alone): `plimsoll check` places two SmallWebRTC calls, each reply heard on its own.
    With the LiveKit calls, two tests at a time (pytest.ini: pairs), not beside the lanes:
    beside a cold build on a 2-core Xeon its replies came damaged both tries (2 of 4 heard,
    15 % stalled, 2026-12-03)."""
    d = example_copy("pipecat-webrtc", tmp)
    p, _ = run(d, "check")
    if "(4 of 4)" not in p.stderr:
        # Beside a busy pair on the 2-core Xeon a reply came unreadable (3 of 4, 12-03;
        # 2 of 4 beside the lanes, 12-01): the bot's SmallWebRTC output, short of CPU, pads
        # its dry queue with silence, holes no code survives (issue 61; now named as holes
        # in the stalls). Once more on whatever the machine is now.
        p, _ = run(d, "check")
    assert p.returncode == 0, p.stderr
    assert "each reply heard on its own call (4 of 4)" in p.stderr, p.stderr


@pytest.mark.quiet
@pytest.mark.pairs
def test_a_pipecat_realtime_bot_is_heard_call_by_call(tmp):
    """Issue 61: a Pipecat SmallWebRTC bot whose model is the OpenAI Realtime API
    (apps/realtime_bot.py, in a copy of examples/pipecat-webrtc and its venv) left 3-5 of 6
    replies unread. Two calls of three turns: every reply read on its own call. Starved of
    CPU (0.25 of a core) its output pads a dry queue with silence that no code survives,
    named as holes: a run beside a busy pair that says so is run once more."""
    d = example_copy("pipecat-webrtc", tmp)
    (d / "bot.py").write_bytes((APPS / "realtime_bot.py").read_bytes())
    p, r = run(d, "run", "-c", "2", "--set", "turns=3")
    if r and r["voice"].get("holes") and r["voice"]["words_unheard"]:
        p, r = run(d, "run", "-c", "2", "--set", "turns=3")
    assert p.returncode == 0, p.stderr
    v = r["voice"]
    assert (v["words_checked"], v["words_unheard"], v["words_wrong"]) == (6, 0, 0), (v, p.stderr)
    assert v["stages"]["realtime_responses"] >= 6, v


@pytest.mark.quiet
@pytest.mark.pairs
def test_a_realtime_bot_that_sends_every_reply_out_of_the_first_call_is_named(tmp):
    """Issue 61, item 4: the same Realtime bot with a router keyed by the wrong id
    (AGENT_BUG=first: every call's audio to the first call's output). The first caller
    hears both replies interleaved delta by delta, no piece long enough to read; the second
    hears nothing and times out. The replies are found by their sound and named as
    cross-talk, whose and where: exit 3; `check` says it first, and the timeout says so."""
    d = example_copy("pipecat-webrtc", tmp)
    (d / "bot.py").write_bytes((APPS / "realtime_bot.py").read_bytes())
    toml = (d / "plimsoll.toml").read_text()
    (d / "plimsoll.toml").write_text(toml.replace("env = { ", 'env = { AGENT_BUG = "first", ', 1))
    p, r = run(d, "run", "-c", "2", "--set", "turns=1")
    assert p.returncode == 3, p.stderr
    v = r["voice"]
    assert v["words_wrong"] == 1, (v, p.stderr)
    c = v["crosstalk"][0]
    assert c["by_sound"] and c["with_own"] and not c["owner_heard_own"], c
    assert c["owner"] != c["heard_on"], c
    said = f"call {c['owner']}'s reply was heard on call {c['heard_on']} interleaved with that call's own (found by its sound: cut too fine to read), and call {c['owner']} heard none of its own"
    assert said in p.stderr, p.stderr
    # `check` says the cause first, the timeout it caused under it.
    p, _ = run(d, "check")
    assert p.returncode != 0, p.stderr
    first = p.stderr.split("  1. ", 1)[1].split("\n  2. ", 1)[0]
    assert first.startswith("1 of 2 replies were heard on another call"), p.stderr
    assert re.search(r"\n  2\. .* — timeout: session (\S+) turn 1: .*\n     if it is call \1's, it follows from the cross-talk above", p.stderr), p.stderr
