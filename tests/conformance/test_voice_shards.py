"""Calls driven from shards (issue 64, items 1 and 5): two `plimsoll run --shard I/2` place
four calls to one bot (apps/voice_bot.py over Twilio, apps/webrtc_bot.py over WebRTC)
already running, with one shared mock, then `plimsoll merge` puts them together. Known
answers:
- the merge says what one process's step of calls says (calls, replies read back, words),
  not session times over an ideal;
- its counts are the shards' counts added, and its percentiles are those of the shards'
  histograms added bucket for bucket by HdrHistogram's own Python implementation (hdrh):
  what one process recording every call would hold, exactly;
- the same calls placed by one process measure what the shards measured (within the
  spread of one process against itself: the bot's replies are timed by its VAD, not to
  the microsecond);
- a bot that speaks each reply on the next call's line is named even where the two calls
  were placed by different shards (the words are attributed by the shared mock)."""

import json
import math
import os
import shutil
import subprocess
import sys
import time
import urllib.request

from conftest import BIN, Mock, free_port
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
from voice_calls_common import APPS, SCENARIO, bot_dir

# The counts a shard writes (shard-I-of-N.json's `voice`) that RESULT's `voice` says as
# they are, and those it says under `network` (WebRTC's).
COUNTS = ("calls", "dropped", "turns", "words_checked", "words_wrong", "words_unheard", "barge_ins")
NETWORK_COUNTS = ("packets", "packets_lost", "lost_by_bot")


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


def against_a_bot(config_dir, *, app="voice_bot.py", bug="", one_process=None):
    """A shared mock and the bot `app` started, the config's calls sharded against them and
    merged, both stopped however it ends: (exit code, RESULT, stderr). With `one_process`
    (a config dir), the same calls are then placed by one process against the same bot
    and mock, its (exit code, RESULT, stderr) returned after the shards'."""
    mock = Mock(SCENARIO)
    try:
        bot, target = start_bot(mock, bug=bug, app=app)
        try:
            merged = sharded(config_dir, target, mock)
            if one_process is None:
                return merged
            return merged + sharded(one_process, target, mock, n=1)
        finally:
            bot.kill()
    finally:
        mock.stop()


def reference_buckets(d, tag):
    """The shards' histograms of `tag` in d/shards, added by HdrHistogram's Python
    implementation: [(a bucket's highest value in µs, its count)], lowest first."""
    whole = HdrHistogram(1, 24 * 3_600_000_000, 3)
    for log in sorted((d / "shards").glob("shard-*.hlog")):
        reader = HistogramLogReader(str(log), whole)
        while (h := reader.get_next_interval_histogram()) is not None:
            if h.get_tag() == tag:
                whole.add(h)
        reader.close()
    return [(b.value_iterated_to, b.count_at_value_iterated_to) for b in whole.get_recorded_iterator()]


def quantile_ms(buckets, q):
    """The value at quantile q of the buckets, as RESULT says it: the highest value of the
    bucket that holds the ceil(q·n)-th sample, in ms to two places (half away from zero)."""
    target, seen = max(math.ceil(q * sum(c for _, c in buckets)), 1), 0
    for value, count in buckets:
        seen += count
        if seen >= target:
            return math.floor(value / 10 + 0.5) / 100
    return None


def assert_the_merge_is_exact(d, r):
    """RESULT's counts are the shards' added; its response percentiles are the shards'
    histograms' added, bucket for bucket, by the reference implementation."""
    shards = [json.loads(p.read_text())["voice"] for p in sorted((d / "shards").glob("shard-*.json"))]
    v = r["voice"]
    assert len(shards) == 2, shards
    assert {k: v[k] for k in COUNTS} == {k: sum(s[k] for s in shards) for k in COUNTS}, (v, shards)
    if v.get("network"):
        n = v["network"]
        assert {k: n[k] for k in NETWORK_COUNTS} == {k: sum(s[k] for s in shards) for k in NETWORK_COUNTS}, n
    buckets = reference_buckets(d, "voice.response")
    assert 0 < sum(c for _, c in buckets) <= v["turns"], buckets
    for q, key in ((0.5, "response_p50_ms"), (0.95, "response_p95_ms"), (0.99, "response_p99_ms")):
        assert v[key] == quantile_ms(buckets, q), (key, v[key], buckets)


def test_two_shards_of_calls_merge_into_one_step_of_calls(tmp_path):
    (tmp_path / "shards").mkdir()
    (tmp_path / "one").mkdir()
    one = bot_dir(tmp_path / "one")
    code, r, err, one_code, one_r, one_err = against_a_bot(bot_dir(tmp_path / "shards"), one_process=one)
    if r["outcome"] == "unknown":
        # The merge said the shards were not one run (one started late or fell behind
        # beside CI's lanes, 12-06: no latency then, by design). Said, and once more.
        print("the shards were not one run:", err.strip().splitlines()[-3:], "- once more")
        for d in ("shards", "one"):
            shutil.rmtree(tmp_path / d)
            (tmp_path / d).mkdir()
        one = bot_dir(tmp_path / "one")
        code, r, err, one_code, one_r, one_err = against_a_bot(bot_dir(tmp_path / "shards"), one_process=one)
    v = r["voice"]
    assert_the_merge_is_exact(tmp_path / "shards", r)
    assert (code, r["outcome"], v["calls"], v["turns"]) == (0, "ok", 4, 8), err
    assert (v["words_checked"], v["words_wrong"], v["words_unheard"]) == (8, 0, 0), err
    assert v["response_p50_ms"] and v["stages"]["stt_calls"] == 8, v
    assert "merged 2 of 2 shards: 4 concurrent calls over Twilio Media Streams — 4 ok" in err, err
    assert "  replies: 8 answered" in err and "p50/p99 session" not in err, err
    # Judged by its replies, as a step of calls is: no session time over an "ideal".
    assert r["latency_inflation"] is None and "budget: holds" in err, err
    # The same four calls from one process: its replies timed as the shards timed them.
    # Five runs each way on the quiet 2-core VM read p50 987-1035 ms and p95 1025-1268 ms
    # (the p95 of eight replies is nearly their slowest); in CI's lane beside three other
    # workers, 1151 merged against 991 (12-06). A merge that timed a shard's calls from its
    # own start is off by the shards' start, seconds.
    o = one_r["voice"]
    assert (one_code, o["calls"], o["turns"]) == (0, 4, 8), one_err
    for key, within in (("response_p50_ms", 0.35), ("response_p95_ms", 0.5)):
        assert abs(v[key] - o[key]) <= within * o[key], (key, v[key], o[key])


def test_shards_of_webrtc_calls_keep_the_network_line(tmp_path):
    """The same over WebRTC (apps/webrtc_bot.py, Pipecat's SmallWebRTC offer): every reply
    read back through Opus, and the calls' setup and packets added across the shards."""
    import test_webrtc
    code, r, err = against_a_bot(test_webrtc.bot_dir(tmp_path), app="webrtc_bot.py")
    v, n = r["voice"], r["voice"]["network"]
    assert_the_merge_is_exact(tmp_path, r)
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
    assert code == 3 and "heard the reply to call" in err, err
