"""A LiveKit Agents worker measured by what its callers hear: examples/livekit-agent
(livekit-agents 1.8.9 from PyPI, unmodified: an AgentSession with Silero VAD and OpenAI
STT, LLM and TTS pointed at the mock) behind a livekit-server v1.13.5 that Plimsoll starts
fresh for the step as a [[service]]. Each call is a room of its own that the server
dispatches the worker a job for; the caller joins it over LiveKit's /rtc signaling and
speaks once the agent is ready.

Checked: `plimsoll check` from the example's directory hears two calls side by side, each
reply on its own call; a run's RESULT has the calls' words, the agent's readiness as its
own figure, and the server on a row of its own, apart from the worker; an agent name no
worker serves is said in one line; N calls a worker within an RSS budget is read from the
first line (exit 2 over it); a worker at its load threshold is named as the wall; a room
closed mid-call fails that call alone; a transcript shared between calls is caught by the
words (exit 3).

Needs the server (scripts/test builds it: PLIMSOLL_LIVEKIT_SERVER) and the worker's venv
(scripts/test makes it from the example's requirements.txt: PLIMSOLL_LIVEKIT_VENV).
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, ROOT

SERVER = os.environ.get("PLIMSOLL_LIVEKIT_SERVER")
VENV = os.environ.get("PLIMSOLL_LIVEKIT_VENV")
EXAMPLE = ROOT / "examples" / "livekit-agent"

pytestmark = [
    # The worker's load is the machine's CPU: not beside the lanes (pytest.ini: quiet). In a
    # lane beside the other tests and the Rust build (2026-11-29) a job process started too
    # slowly for the agent to be ready within 10 s. The tests that judge no ladder run two
    # at a time after the quiet ones (`pairs`): a call is real time, about a core at most.
    pytest.mark.quiet,
    pytest.mark.skipif(
        not (SERVER and VENV),
        reason="needs livekit-server (PLIMSOLL_LIVEKIT_SERVER) and the worker's venv "
        "(PLIMSOLL_LIVEKIT_VENV); scripts/test makes both",
    ),
]


@pytest.fixture
def example(request):
    """The example in a directory of its own, its .venv the worker's, and livekit-server
    on PATH as its [[service]] names it."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="plimsoll-livekit-"))
    for f in ["agent.py", "plimsoll.toml", "session.toml", "scenario.toml"]:
        shutil.copy(EXAMPLE / f, d / f)
    # Replies of one sentence, not the example's few (8-12 tokens, about 4 s spoken, not
    # 12): the same pipeline and words check, and 14 s less a call of two turns.
    scenario = (d / "scenario.toml").read_text()
    assert "output_tokens = [24, 36]" in scenario
    (d / "scenario.toml").write_text(scenario.replace("output_tokens = [24, 36]", "output_tokens = [8, 12]"))
    if request.node.get_closest_marker("pairs"):
        # Run beside another test, the worker's own gate (no job while the machine's CPU is
        # 70 % busy, its load_threshold in `start` mode) read that test's load as its own and
        # left a call's room without an agent: it gates at a full machine here instead.
        cfg = (d / "plimsoll.toml").read_text()
        assert "env = { " in cfg
        (d / "plimsoll.toml").write_text(cfg.replace("env = { ", 'env = { LOAD_THRESHOLD = "1.0", ', 1))
        # Two workers starting their job processes at once on two cores: a job process took
        # over 10 s to be ready (stop 71's CI, both tries: "timed out waiting for idle
        # processes to initialize"). These tests judge what a call hears, not how soon an
        # agent joins: 20 s to be ready.
        session = (d / "session.toml").read_text()
        assert "answer_timeout_ms = 10000" in session
        (d / "session.toml").write_text(session.replace("answer_timeout_ms = 10000", "answer_timeout_ms = 20000"))
    (d / ".venv").symlink_to((ROOT / VENV).resolve())
    (d / "bin").mkdir()
    (d / "bin" / "livekit-server").symlink_to(pathlib.Path(SERVER).resolve())
    env = dict(os.environ, PATH=f"{d / 'bin'}:{os.environ['PATH']}")
    yield d, env
    shutil.rmtree(d, ignore_errors=True)


def plimsoll(d, env, *args):
    p = subprocess.run([BIN, *args], cwd=d, env=env, capture_output=True, text=True, timeout=600)
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    return p, (json.loads(lines[-1][7:]) if lines else None)


def agent_lost_a_turn(p):
    """The one way this worker fails two calls on a 2-core machine that also runs the load,
    the mock and the server: both jobs start at once beside two new idle processes, the
    agent's VAD falls behind real time ("VAD inference is slower than realtime") and cuts a
    turn's start, its words are lost (the mock heard no words), so no reply comes. That is
    the agent's doing, said as such; about one run in six here. Beside the other pair's
    worker, a job process can also take more than the 10 s to start (no agent ready)."""
    return p.returncode == 3 and (
        "the bot never answered within" in p.stderr or "no agent was ready in room" in p.stderr
    )


@pytest.mark.pairs
def test_check_hears_two_calls_through_livekit_each_on_its_own(example):
    d, env = example
    p, _ = plimsoll(d, env, "check")
    if agent_lost_a_turn(p):
        p, _ = plimsoll(d, env, "check")
    assert p.returncode == 0, p.stderr
    assert "two calls side by side" in p.stderr, p.stderr
    assert "each reply heard on its own call (4 of 4)" in p.stderr, p.stderr


@pytest.mark.pairs
def test_a_run_reports_the_words_the_agent_s_readiness_and_the_server_apart(example):
    d, env = example
    p, r = plimsoll(d, env, "run", "--set", "turns=1")
    if agent_lost_a_turn(p):
        assert "heard no words" in p.stderr or "no agent was ready" in p.stderr, p.stderr
        p, r = plimsoll(d, env, "run", "--set", "turns=1")
    assert p.returncode == 0, p.stderr
    v = r["voice"]
    assert v["protocol"] == "webrtc" and v["calls"] == 2 and v["dropped"] == 0, v
    assert v["words_checked"] == 2 and v["words_wrong"] == 0, v
    # The mock's STT, LLM and TTS, the agent's VAD silence and the SFU: not instant.
    assert v["response_p50_ms"] > 300, v
    net = v["network"]
    # From making the room to the agent ready: the dispatch, a job process's start and
    # the agent's session — after the caller's own join (signaling, ICE, DTLS).
    assert net["agent_p50_ms"] > net["signaling_p50_ms"], net
    deps = {x["name"]: x for x in r["dependencies"]}
    assert deps["livekit"]["kind"] == "service" and deps["livekit"]["processes"] == 1, deps
    # The worker's process tree (its job processes too) is the SUT's, not the server's.
    assert r["peak_rss_mb"] > deps["livekit"]["peak_rss_mb"], (r["peak_rss_mb"], deps)
    assert "service livekit:" in p.stderr and "the agent ready" in p.stderr, p.stderr


def named(d, agent, timeout_ms=None):
    """The worker registered as "support" (LiveKit's agent_name: explicit dispatch only),
    the caller asking for `agent` (waiting `timeout_ms` for it, or as the fixture set)."""
    cfg = (d / "plimsoll.toml").read_text()
    (d / "plimsoll.toml").write_text(cfg.replace("env = { ", 'env = { LIVEKIT_AGENT_NAME = "support", ', 1))
    session = (d / "session.toml").read_text().replace("[voice]\n", f'[voice]\nagent = "{agent}"\n')
    if timeout_ms is not None:
        session = re.sub(r"answer_timeout_ms = \d+", f"answer_timeout_ms = {timeout_ms}", session)
    (d / "session.toml").write_text(session)


@pytest.mark.pairs
def test_a_named_agent_is_dispatched(example):
    d, env = example
    named(d, "support")
    p, r = plimsoll(d, env, "run", "-c", "1", "--set", "turns=1")
    if agent_lost_a_turn(p):
        p, r = plimsoll(d, env, "run", "-c", "1", "--set", "turns=1")
    assert p.returncode == 0 and r["voice"]["words_checked"] == 1, p.stderr


@pytest.mark.pairs
def test_an_agent_name_no_worker_serves_is_one_line(example):
    d, env = example
    named(d, "nobody", timeout_ms=4000)  # no agent comes: waiting 4 s says the same as 20
    p, r = plimsoll(d, env, "run", "-c", "1", "--set", "turns=1")
    assert p.returncode == 3, p.stderr
    assert "no agent was ready in room" in p.stderr, p.stderr
    assert 'a worker registered as agent "nobody"' in p.stderr, p.stderr
    assert "panicked" not in p.stderr, p.stderr


@pytest.mark.pairs
def test_sessions_per_worker_within_an_rss_budget_read_from_the_first_line(example):
    """The founding benchmark's terms: N sessions a worker within an RSS budget, no errors,
    from one command's first line; over the budget exits 2. The worker's health server is
    probed beside the calls (its event loop's lag) and its log read for its jobs."""
    d, env = example
    # The example's process arm (its executor's default) named, so no note on its arms
    # comes before the budget's line.
    args = ["run", "--arm", "process", "-c", "1", "--set", "turns=1", "--budget", "rss_mb=4096"]
    p, r = plimsoll(d, env, *args)
    if agent_lost_a_turn(p):
        p, r = plimsoll(d, env, *args)
    assert p.returncode == 0, p.stderr
    first = p.stderr.splitlines()[0]
    assert first.startswith("budget: 1 call within budget — RSS MB "), first
    assert first.endswith(" ≤ 4096; no call failed"), first
    assert r["probe_p99_ms"] > 0 and r.get("probe_failed", 0) == 0, r
    assert r["log"]["worker"]["jobs"] == 1, r["log"]
    assert "worker: took 1 job" in p.stderr, p.stderr
    # The worker, and the job processes it keeps warm, before the first call; one more
    # process for the call's job at the peak.
    assert r["baseline_processes"] >= 2 and r["peak_processes"] > r["baseline_processes"], r
    assert "processes (what a worker keeps warm is there)" in p.stderr, p.stderr
    # The job process is forked from a parent that has loaded onnxruntime and the VAD: by
    # PSS a call costs its own pages (~70-80 MB here), by summed RSS the parent's again
    # (~410 MB). The call is said by PSS, the RSS beside it.
    assert r["pss"]["kb_per_session"] < 0.5 * r["rss_kb_per_session"], (r["pss"], r["rss_kb_per_session"])
    assert "memory (PSS: each page its processes share counted once)" in p.stderr, p.stderr
    # The worker's job processes are ended by the stop: their shutdown is not its errors.
    assert r["log"]["errors"] == 0, r["log"]


@pytest.mark.pairs
def test_a_worker_over_its_rss_budget_exits_2_from_the_first_line(example):
    d, env = example
    # 100 MB: less than the worker's models alone.
    args = ["run", "--arm", "process", "-c", "1", "--set", "turns=1", "--budget", "rss_mb=100"]
    p, r = plimsoll(d, env, *args)
    if agent_lost_a_turn(p):
        p, r = plimsoll(d, env, *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines()[0].startswith("budget: 1 call over budget — RSS MB "), p.stderr
    assert "threshold crossed: budget RSS MB" in p.stderr, p.stderr


def test_a_worker_at_its_load_threshold_refuses_calls_and_that_is_the_wall(example):
    """A worker whose load_threshold its load always reaches (0 here; 0.7 on a busy machine)
    marks itself full and the server dispatches it no job: the ladder's collapse is the
    worker's own refusal, in its words, not the system failing. (A ramp: alone, not in
    pairs, where the other test's load is read as a busy machine and the step run again.)"""
    d, env = example
    cfg = (d / "plimsoll.toml").read_text()
    (d / "plimsoll.toml").write_text(cfg.replace("env = { ", 'env = { LOAD_THRESHOLD = "0", ', 1))
    (d / "session.toml").write_text(
        (d / "session.toml").read_text().replace("answer_timeout_ms = 10000", "answer_timeout_ms = 4000")
    )
    p = subprocess.run(
        [BIN, "ramp", "--arm", "none", "--ladder", "1", "--set", "turns=1", "--no-history", "--json"],
        cwd=d, env=env, capture_output=True, text=True, timeout=600,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    v = doc["analysis"]["verdict"]
    assert v["collapse"] == 1, v
    assert v["wall"]["short"].startswith("the worker refused calls at load "), v["wall"]
    assert "(its load_threshold 0) at 1" in v["wall"]["short"], v["wall"]
    assert v["headline"].startswith("no level within budget · wall: the worker refused calls"), v
    assert v["headline"].endswith(" at 1 · collapse at 1"), v["headline"]
    step = doc["steps"][0]
    assert step["log"]["worker"]["full"] >= 1 and step["log"]["worker"]["jobs"] == 0, step["log"]
    assert "no agent was ready in room" in p.stderr, p.stderr


@pytest.mark.pairs
def test_a_room_closed_mid_call_ends_that_call_in_one_line_and_the_other_goes_on(example):
    """The agent of the first call deletes its room two seconds in (LiveKit's
    ctx.delete_room(), as an agent hanging up does): that caller is told it left the room
    and its call fails in one line saying so; the other call goes on and is heard; the run
    exits 3 and its RESULT is whole."""
    d, env = example
    src = (d / "agent.py").read_text()
    start = "    await session.start(room=ctx.room, agent=Assistant())\n"
    assert start in src
    close = '    if "-s0-" in ctx.room.name:\n        await asyncio.sleep(2.0)\n        await ctx.delete_room()\n'
    (d / "agent.py").write_text("import asyncio\n" + src.replace(start, start + close))
    p, r = plimsoll(d, env, "run", "-c", "2", "--set", "turns=1")
    # Both calls failed: the other call lost its turn as this worker does on a busy 2-core
    # machine (agent_lost_a_turn), or failed otherwise beside the Pipecat pair (CI
    # 2026-12-06, once, its words not kept). Run once more: a call the closed room really
    # took with it fails again.
    if p.returncode == 3 and r and r["sessions_failed"] == 2:
        print(p.stderr[-4000:])
        p, r = plimsoll(d, env, "run", "-c", "2", "--set", "turns=1")
    assert p.returncode == 3, p.stderr
    # The server sends its leave and closes the peer connection together; the caller names
    # whichever it reads first (the peer connection, once in five runs on a slow EPYC,
    # CI 2026-12-04): either way one line says the bot's side ended the call.
    assert ("livekit: the server ended the caller's part in the room" in p.stderr
            or "the bot's side of the call went away" in p.stderr), p.stderr
    assert (r["sessions_ok"], r["sessions_failed"]) == (1, 1), p.stderr[-4000:]
    assert r["voice"]["words_checked"] >= 1 and r["voice"]["words_wrong"] == 0, r["voice"]
    assert "panicked" not in p.stderr, p.stderr


@pytest.mark.pairs
def test_a_transcript_shared_between_calls_is_caught_by_the_words(example):
    """A planted bug: the agent keeps each room's last user turn in one file shared by its
    job processes, and answers another call's turn when there is one. The callers hear
    replies meant for the other call: caught by the words, exit 3."""
    d, env = example
    src = (d / "agent.py").read_text()
    anchor = '        super().__init__(instructions="You are a helpful voice AI assistant. Be brief.")\n'
    assert anchor in src
    bug = f"""
    async def on_user_turn_completed(self, turn_ctx, new_message):
        import json, pathlib
        from livekit.agents import get_job_context
        shared = pathlib.Path({str(d / "shared-turns.json")!r})
        turns = json.loads(shared.read_text()) if shared.exists() else {{}}
        room = get_job_context().room.name
        turns[room] = new_message.text_content or ""
        shared.write_text(json.dumps(turns))
        other = [t for r, t in turns.items() if r != room and t]
        if other:
            new_message.content = [other[-1]]
"""
    (d / "agent.py").write_text(src.replace(anchor, anchor + bug))
    p, r = plimsoll(d, env, "run", "-c", "2", "--set", "turns=2")
    if r and r["voice"]["words_wrong"] == 0 and p.returncode == 3:
        # A call that failed before any reply reached the wrong call (a turn the VAD lost;
        # beside the other pair on a slower 2-core machine, a job not ready within 10 s, or
        # a line dropped, seen 2026-12-01): nothing to judge the words by, so once more.
        p, r = plimsoll(d, env, "run", "-c", "2", "--set", "turns=2")
    assert p.returncode == 3, p.stderr
    assert r["voice"]["words_wrong"] >= 1, r["voice"]
    assert "heard the reply to call" in p.stderr, p.stderr
