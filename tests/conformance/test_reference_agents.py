"""Real steps against the Python reference agents (FastAPI + the official SDKs).

`plimsoll run` starts each agent fresh against its own mock, drives concurrent SSE
sessions, and must report a clean step; with the planted shared-memory bug the
integrity oracle must fail the step. With Anthropic's prompt cache in use the hit share
rises and the provider's time to first token falls turn by turn; a timestamp planted in
the system prompt breaks the cache on every call, named by kind, and costs what the
price table predicts.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

from conftest import BIN, ROOT


def plimsoll_run(example, concurrency, config="plimsoll.toml", **env):
    venv_bin = str(pathlib.Path(sys.executable).parent)
    full_env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""), **env}
    p = subprocess.run(
        [BIN, "run", "--config", str(ROOT / "examples" / example / config), "--concurrency", str(concurrency)],
        capture_output=True, text=True, env=full_env, timeout=300,
    )
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    result = json.loads(lines[-1].removeprefix("RESULT ")) if lines else None
    return p.returncode, result, p.stderr


@pytest.mark.parametrize("example", ["openai-agent", "anthropic-agent"])
def test_clean_step(example):
    code, r, err = plimsoll_run(example, 25)
    # 4 = harness-bound: on 2 cores a busy Python SUT can starve Plimsoll itself; the
    # step is still clean, and the verdict says so.
    assert code in (0, 4), err
    assert (code == 4) == (r["harness"]["bound"] == "harness")
    assert r["outcome"] == "ok" and r["sessions_ok"] == 25 and r["turns"] == 75
    assert r["integrity_violations"] == 0
    assert r["llm_calls"] == 225  # memory scenario: set, get, answer per turn
    assert r["p50_ttft_ms"] is not None and r["p50_ttft_ms"] > 0
    # Never under 1 (exact). The ceiling holds where the step measured the SUT: a
    # harness-bound step (exit 4, a busy 2-core machine) says its latency is Plimsoll's own.
    assert r["latency_inflation"] >= 1.0
    # A step the machine's other processes took a material share of (contaminated) says
    # it measured the machine too: its latency is not the SUT's alone.
    busy = (r.get("interference") or {}).get("contaminated", False)
    assert code == 4 or busy or r["latency_inflation"] < 3.0, (r["latency_inflation"], r.get("interference"))
    assert r["peak_rss_mb"] > 20  # a Python process
    assert r["cpu_ms_per_turn"] > 0


@pytest.mark.parametrize("example", ["openai-agent", "anthropic-agent"])
def test_shared_memory_bug_is_an_integrity_failure(example):
    code, r, err = plimsoll_run(example, 25, AGENT_BUG="shared_memory")
    assert code == 3, err
    assert r["outcome"] == "integrity", r
    assert r["integrity_violations"] > 0
    assert "integrity" in err


def test_harness_mode_merges_probe_and_ledger():
    code, r, err = plimsoll_run("harness", 15)
    assert code in (0, 4), err
    assert r["outcome"] == "ok" and r["sessions_ok"] == 15 and r["turns"] == 45
    # Plimsoll's own figures, merged into the harness's line:
    assert r["llm_calls"] == 135 and r["integrity_violations"] == 0
    assert r["peak_rss_mb"] > 20 and r["baseline_rss_mb"] > 20, "baseline taken at PLIMSOLL BASELINE"
    assert r["p50_session_ms"] > 0 and r["latency_inflation"] >= 1.0


def test_harness_result_line_with_a_bad_key_is_a_clear_error():
    venv_bin = str(pathlib.Path(sys.executable).parent)
    line = 'RESULT {"concurrency": 2, "sessions_ok": 2, "sessions_failed": 0, "turns": 4, "wall_ms": 5, "p50_sesion_ms": 3}'
    p = subprocess.run(
        [BIN, "run", "--config", str(ROOT / "examples/harness/plimsoll.toml"), "--harness", f"echo '{line}'"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": venv_bin + os.pathsep + os.environ["PATH"]},
    )
    assert p.returncode == 1
    assert "p50_sesion_ms: is not a RESULT key" in p.stderr
    assert "RESULT" not in p.stdout


def test_thinking_agent_passes_and_stripping_its_thinking_is_caught_at_every_level():
    """Extended thinking on: the agent sends each thinking block back and the step is
    clean. With the planted bug it drops them between tool rounds: every session's
    second call gets the API's 400, and every step reports one reasoning violation
    per session, whatever the concurrency."""
    code, r, err = plimsoll_run("anthropic-agent", 10, AGENT_THINKING="1")
    assert code in (0, 4), err
    assert r["outcome"] == "ok" and r["sessions_ok"] == 10 and r["integrity_violations"] == 0
    assert r["llm_calls"] == 90
    assert r["reasoning"]["replies"] == 90 and r["reasoning"]["reasoning_tokens"] == 90 * 200
    assert r["reasoning"]["first_answer_token_ms"] > r["reasoning"]["first_token_ms"] + 500
    assert "reasoning: 90 of 90 LLM calls reasoned" in err
    for concurrency in (1, 4, 12):
        code, r, err = plimsoll_run("anthropic-agent", concurrency, AGENT_BUG="strip_thinking")
        assert code == 3, err
        assert r["outcome"] == "integrity", r
        assert r["integrity_violations"] == concurrency, r
        assert r["sessions_failed"] == concurrency
        assert '"kind":"reasoning"' in err and 'dropped"' in err, err
        noun = "violation" if concurrency == 1 else "violations"
        assert f"{concurrency} integrity {noun} ({concurrency} reasoning: thinking blocks" in err


def test_prompt_cache_warms_up_and_a_timestamp_in_the_system_prompt_breaks_it():
    """10 turns of the agent with Anthropic's prompt cache in use: the hit share rises
    turn by turn and the provider's time to first token falls with it, nothing breaks.
    The same agent with the current time in its system prompt: ~0 % hits, every call a
    cache break of kind system_changed showing the changing time, and a cost per session
    higher by the factor the price table predicts (each token it read before it now
    writes)."""
    code, good, err = plimsoll_run("anthropic-agent", 2, config="plimsoll-cache.toml")
    assert code in (0, 4), err
    assert good["outcome"] == "ok" and good["turns"] == 20, good
    turns = good["cache"]["by_turn"]
    assert [t["turn"] for t in turns] == list(range(1, 11))
    hits = [t["hit_share"] for t in turns]
    ttft = [t["ttft_ms"] for t in turns]
    assert all(b >= a - 0.01 for a, b in zip(hits, hits[1:])), hits
    assert hits[0] < 0.9 < 0.97 < hits[-1], hits
    assert all(b <= a + 1.0 for a, b in zip(ttft, ttft[1:])), ttft
    assert ttft[-1] < ttft[0] - 15, ttft
    assert good["cache"]["breaks"] == 0
    assert "by turn: hit %" in err

    code, bug, err = plimsoll_run("anthropic-agent", 2, config="plimsoll-cache.toml", AGENT_BUG="timestamp")
    assert code in (0, 4), err
    assert bug["outcome"] == "ok", bug
    assert bug["cache"]["hit_share"] < 0.05, bug["cache"]
    assert bug["cache"]["could_hit_share"] > 0.9
    [kind] = bug["cache"]["break_kinds"]
    assert (kind["kind"], kind["part"]) == ("system_changed", "system message")
    assert kind["count"] == bug["cache"]["breaks"] >= 55  # every call after each session's first
    stamp = r"\d\d:\d\d:\d\d\.\d{3}"
    assert re.search(stamp, kind["before"]) and re.search(stamp, kind["after"]), kind
    assert kind["before"] != kind["after"]
    assert "system_changed — system message, char" in err
    assert bug["cache"]["by_turn"][-1]["ttft_ms"] > turns[-1]["ttft_ms"] + 100

    # What the price table predicts: the good run's tokens, every token it read from the
    # cache written to it instead.
    prices = tomllib.loads(subprocess.run([BIN, "prices"], capture_output=True, text=True, check=True).stdout)
    p = prices["models"]["claude-sonnet-4-6"]
    t = good["cost"]["by_model"]["claude-sonnet-4-6"]
    uncached = t["input_tokens"] - t["read_tokens"] - t["write_5m_tokens"]
    out = t["output_tokens"] * p["output"]
    good_cost = t["read_tokens"] * p["cached_input"] + t["write_5m_tokens"] * p["cache_write"] + uncached * p["input"] + out
    bug_cost = (t["read_tokens"] + t["write_5m_tokens"]) * p["cache_write"] + uncached * p["input"] + out
    predicted = bug_cost / good_cost
    measured = bug["cost"]["per_session"] / good["cost"]["per_session"]
    assert predicted > 5
    assert abs(measured / predicted - 1) < 0.03, (measured, predicted)
    assert bug["cost"]["perfect_per_session"] < bug["cost"]["per_session"] / 5
