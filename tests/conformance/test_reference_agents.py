"""Real steps against the Python reference agents (FastAPI + the official SDKs).

`plimsoll run` starts each agent fresh against its own mock, drives concurrent SSE
sessions, and must report a clean step; with the planted shared-memory bug the
integrity oracle must fail the step.
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import BIN, ROOT


def plimsoll_run(example, concurrency, **env):
    venv_bin = str(pathlib.Path(sys.executable).parent)
    full_env = {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""), **env}
    p = subprocess.run(
        [BIN, "run", "--config", str(ROOT / "examples" / example / "plimsoll.toml"), "--concurrency", str(concurrency)],
        capture_output=True, text=True, env=full_env, timeout=300,
    )
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    result = json.loads(lines[-1].removeprefix("RESULT ")) if lines else None
    return p.returncode, result, p.stderr


@pytest.mark.parametrize("example", ["openai-agent", "anthropic-agent"])
def test_clean_step(example):
    code, r, err = plimsoll_run(example, 25)
    assert code == 0, err
    assert r["outcome"] == "ok" and r["sessions_ok"] == 25 and r["turns"] == 75
    assert r["integrity_violations"] == 0
    assert r["llm_calls"] == 225  # memory scenario: set, get, answer per turn
    assert r["p50_ttft_ms"] is not None and r["p50_ttft_ms"] > 0
    assert 1.0 <= r["latency_inflation"] < 3.0
    assert r["peak_rss_mb"] > 20  # a Python process
    assert r["cpu_ms_per_turn"] > 0


@pytest.mark.parametrize("example", ["openai-agent", "anthropic-agent"])
def test_shared_memory_bug_is_an_integrity_failure(example):
    code, r, err = plimsoll_run(example, 25, AGENT_BUG="shared_memory")
    assert code == 3, err
    assert r["outcome"] == "integrity", r
    assert r["integrity_violations"] > 0
    assert "integrity" in err
