"""The Redis-backed agent (examples/redis-memory) ramped the way a user runs it: from its
directory, its two arms side by side under a 1-core cap. A real redis-server is started
fresh for every step as a [[service]].

Known answers: the arm that holds a pooled connection for a whole turn can run at most
REDIS_POOL (4) turns at once, so its throughput is flat at 4 / turn time with the CPU
idle, its connections to redis flat at 4 — and the verdict must name that pool as the
wall. The arm that takes a connection per command shares the same 4 connections among
every session: its throughput keeps growing, and no pool may be blamed.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, ROOT

# Judged on a quiet machine (pytest.ini: quiet).
pytestmark = pytest.mark.quiet

EXAMPLE = ROOT / "examples" / "redis-memory"


@pytest.mark.skipif(shutil.which("redis-server") is None,
                    reason="redis-server is not installed (Debian: apt install redis-server; scripts/test installs it as root)")
def test_the_held_pool_is_named_as_the_wall_and_the_fix_is_not():
    before = set(subprocess.run(["pgrep", "-x", "redis-server"], capture_output=True, text=True).stdout.split())
    venv_bin = str(pathlib.Path(sys.executable).parent)
    env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")}
    p = subprocess.run(
        [BIN, "ramp", "--cpus", "1", "--ladder", "2,4,8,16", "--no-history", "--json"],
        capture_output=True, text=True, env=env, cwd=EXAMPLE, timeout=600,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout.splitlines()[-1])
    arms = {a["arm"]: a for a in doc["arms"]}
    assert set(arms) == {"held", "command"}, p.stderr

    held = arms["held"]
    steps = held["steps"]
    assert all(s["outcome"] == "ok" and s["integrity_violations"] == 0 for s in steps), p.stderr
    v = held["analysis"]["verdict"]
    assert v["wall"]["kind"] == "pool", p.stderr
    assert "connections to redis stay at 4" in v["wall"]["text"], v["wall"]["text"]
    assert "a client pool of 4 connections to redis is the wall" in v["wall"]["text"]
    assert "wall: a pool of 4 connections to redis" in v["headline"], v["headline"]
    # The pool's ceiling: 4 turns at a time, each one turn long. No level past 4 sessions
    # runs more turns than that; the command arm, with the same 4 connections, does.
    turn_s = steps[0]["p50_turn_ms"] / 1000.0
    ceiling = 4.0 / turn_s
    figures = [(s["concurrency"], s["turns_per_s"], s["interference"]) for s in steps]
    held_top = max(s["turns_per_s"] for s in steps if s["concurrency"] >= 4)
    assert held_top <= 1.15 * ceiling, (held_top, ceiling, figures, p.stderr)
    # Where a plateau is read, it is the ceiling. A busy CI machine can slow one level
    # enough that the next grows past the plateau's 10 %; the ceiling above still holds.
    if v["plateau"] is not None:
        plateau = v["plateau"]["turns_per_s"]
        assert abs(plateau / ceiling - 1.0) <= 0.15, (plateau, ceiling, figures, p.stderr)
    else:
        print("no plateau read; levels (sessions, turns/s, interference):", figures)
    for s in steps:
        redis = [c for c in s["connections"] if c.get("peer") == "redis"]
        assert redis and redis[0]["peak"] == min(4, s["concurrency"]), s["connections"]
        dep = [d for d in s["dependencies"] if d["name"] == "redis"][0]
        assert dep["kind"] == "service" and dep["processes"] == 1 and dep["peak_rss_mb"] > 1, dep
        # Below what Plimsoll reads as a CPU wall (analysis::throughput::CPU_WALL, 0.85):
        # the pool holds the SUT back, not its core (0.64 at 16 sessions on a 2-core Xeon,
        # CI 2026-12-04; about 0.5 on the EPYC).
        assert s["cpu_of_cap"] < 0.85, s

    command = arms["command"]
    cv = command["analysis"]["verdict"]
    assert cv["wall"]["kind"] != "pool" and "pool" not in cv["wall"]["text"], p.stderr
    top = command["steps"][-1]
    # Past the held arm's plateau by a margin a pool could not give: 2.2× to 4× measured
    # here on a quiet 2-core machine (a fresh clone's run read 2.19×, the CPU at 16 sessions
    # the limit); held at its pool the same SUT stays under its ceiling (checked above).
    assert top["turns_per_s"] > 1.5 * held_top, (top["turns_per_s"], held_top)
    # Same 4 connections to redis, many more turns: the pool is not what waits.
    assert [c for c in top["connections"] if c.get("peer") == "redis"][0]["peak"] <= 4
    assert "a client pool of 4 connections to redis is the wall" in p.stderr
    # Nothing left running: every redis-server of the run was stopped with its step.
    after = set(subprocess.run(["pgrep", "-x", "redis-server"], capture_output=True, text=True).stdout.split())
    assert after <= before, after - before


@pytest.mark.skipif(shutil.which("redis-server") is None,
                    reason="redis-server is not installed (Debian: apt install redis-server; scripts/test installs it as root)")
def test_a_worker_pool_is_told_apart_from_the_connection_pool():
    """workers.toml: each turn runs on a ThreadPoolExecutor worker holding one pooled
    connection. With 4 workers before 16 connections, the threads and the connections to
    redis stay at 4 together: the workers are the wall. With 16 workers before 4
    connections, the threads grow past the connections, which stop at 4: the pool is."""
    venv_bin = str(pathlib.Path(sys.executable).parent)
    env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", "")}
    p = subprocess.run(
        [BIN, "ramp", "--config", "workers.toml", "--cpus", "1", "--ladder", "2,4,8,16",
         "--no-history", "--json"],
        capture_output=True, text=True, env=env, cwd=EXAMPLE, timeout=600,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout.splitlines()[-1])
    arms = {a["arm"]: a for a in doc["arms"]}
    assert set(arms) == {"workers", "pool"}, p.stderr
    for a in arms.values():
        assert all(s["outcome"] == "ok" and s["integrity_violations"] == 0 for s in a["steps"]), p.stderr

    w = arms["workers"]["analysis"]["verdict"]["wall"]
    assert w["kind"] == "pool", p.stderr
    assert "a pool of worker threads" in w["text"] and "connections to redis at 4" in w["text"], w["text"]
    assert w["short"].startswith("a pool of 4 worker threads") and "each holding a connection to redis" in w["short"], w["short"]

    c = arms["pool"]["analysis"]["verdict"]["wall"]
    assert c["kind"] == "pool", p.stderr
    assert "a client pool of 4 connections to redis is the wall" in c["text"], c["text"]
    assert "worker" not in c["short"], c["short"]
    top = arms["pool"]["steps"][-1]
    assert [x for x in top["connections"] if x.get("peer") == "redis"][0]["peak"] == 4, top["connections"]
    assert top["peak_threads"] >= 16, top["peak_threads"]
