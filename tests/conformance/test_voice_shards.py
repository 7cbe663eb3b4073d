"""Calls driven from shards (issue 64, item 1): two `plimsoll run --shard I/2` place four
Twilio calls to one bot (apps/voice_bot.py) already running, with one shared mock, then
`plimsoll merge` puts them together. Known answers: the merge says what one process's step
of calls says (calls, replies read back, words), not session times over an ideal; and a bot
that speaks each reply on the next call's line is named even where the two calls were
placed by different shards (the words are attributed by the shared mock)."""

import json
import os
import subprocess
import sys
import time
import urllib.request

from conftest import BIN, Mock, free_port
from voice_calls_common import APPS, SCENARIO, bot_dir


def start_bot(mock, bug="", app="voice_bot.py"):
    port = free_port()
    env = dict(os.environ, PORT=str(port), OPENAI_BASE_URL=mock.base + "/v1", OPENAI_API_KEY="x", AGENT_BUG=bug)
    bot = subprocess.Popen(
        [sys.executable, str(APPS / app)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    end = time.time() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
            return bot, f"http://127.0.0.1:{port}"
        except OSError:
            assert time.time() < end and bot.poll() is None, "the voice bot did not start"
            time.sleep(0.2)


def sharded(d, target, mock, calls=4, n=2):
    """N shards started together into d/shards, then their merge: (exit code, RESULT, stderr)."""
    at = f"{time.time() + 3:.3f}"
    shard = lambda i: [BIN, "run", "-c", str(calls), "--target", target, "--mock", mock.base,
                       "--shard", f"{i}/{n}", "--start-at", at, "--shard-dir", "shards"]
    procs = [subprocess.Popen(shard(i), cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(n)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    m = subprocess.run([BIN, "merge", "shards"], cwd=d, capture_output=True, text=True, timeout=60)
    line = [l for l in m.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return m.returncode, json.loads(line[7:]), m.stderr


def against_a_bot(config_dir, *, app="voice_bot.py", bug=""):
    """A shared mock and the bot `app` started, the config's calls sharded against them and
    merged, both stopped however it ends: (exit code, RESULT, stderr)."""
    mock = Mock(SCENARIO)
    try:
        bot, target = start_bot(mock, bug=bug, app=app)
        try:
            return sharded(config_dir, target, mock)
        finally:
            bot.kill()
    finally:
        mock.stop()


def test_two_shards_of_calls_merge_into_one_step_of_calls(tmp_path):
    code, r, err = against_a_bot(bot_dir(tmp_path))
    v = r["voice"]
    assert (code, r["outcome"], v["calls"], v["turns"]) == (0, "ok", 4, 8), err
    assert (v["words_checked"], v["words_wrong"], v["words_unheard"]) == (8, 0, 0), err
    assert v["response_p50_ms"] and v["stages"]["stt_calls"] == 8, v
    assert "merged 2 of 2 shards: 4 concurrent calls over Twilio Media Streams — 4 ok" in err, err
    assert "  replies: 8 answered" in err and "p50/p99 session" not in err, err
    # Judged by its replies, as a step of calls is: no session time over an "ideal".
    assert r["latency_inflation"] is None and "budget: holds" in err, err


def test_shards_of_webrtc_calls_keep_the_network_line(tmp_path):
    """The same over WebRTC (apps/webrtc_bot.py, Pipecat's SmallWebRTC offer): every reply
    read back through Opus, and the calls' setup and packets added across the shards."""
    import test_webrtc
    code, r, err = against_a_bot(test_webrtc.bot_dir(tmp_path), app="webrtc_bot.py")
    v, n = r["voice"], r["voice"]["network"]
    assert (code, v["protocol"], v["calls"], v["turns"], v["words_wrong"]) == (0, "webrtc", 4, 8, 0), err
    assert v["words_checked"] + v["words_unheard"] == 8 and v["words_checked"] >= 6, v
    assert n["packets"] > 0 and n["signaling_p50_ms"] > 0 and n["dtls_p50_ms"] > 0, n
    assert "4 concurrent calls over WebRTC (Opus)" in err and "  network:" in err, err


def test_a_reply_spoken_on_another_shards_call_is_named(tmp_path):
    code, r, err = against_a_bot(bot_dir(tmp_path), bug="cross")
    v = r["voice"]
    # Shard 0 places calls 0 and 2, shard 1 calls 1 and 3. Each reply goes to the call
    # that connected next: in a ring of four calls, two per shard, at least two of the
    # four hops cross from one shard's call to the other's.
    assert v["words_wrong"] >= 1 and v["crosstalk"], v
    pairs = {(c["heard_on"][-1], c["owner"][-1]) for c in v["crosstalk"]}
    assert any(int(on) % 2 != int(owner) % 2 for on, owner in pairs), pairs
    assert code != 0 and "heard the reply to call" in err, err
