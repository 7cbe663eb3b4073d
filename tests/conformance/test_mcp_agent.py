"""Real steps against the MCP example agent (examples/mcp-agent: FastAPI, the official
`openai` SDK for the model and the official `mcp` SDK for its tools, served by the
step's mock). A clean step over Streamable HTTP and over stdio (a server per session,
reported with its processes and memory per session); the planted bug — an MCP result
dropped before the next model call — caught as an integrity violation naming the tool;
and a 2 s tool behind a pool of one, which shows in the per-request table and moves the
line where its arithmetic puts it."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

from conftest import BIN, ROOT

CONFIG = ROOT / "examples" / "mcp-agent" / "plimsoll.toml"


def env(**extra):
    venv_bin = str(pathlib.Path(sys.executable).parent)
    return {**os.environ, "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""), **extra}


def run(concurrency, config=CONFIG, **extra):
    p = subprocess.run([BIN, "run", "--config", str(config), "--concurrency", str(concurrency)],
                       capture_output=True, text=True, env=env(**extra), timeout=300)
    lines = [line for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    return p.returncode, (json.loads(lines[-1].removeprefix("RESULT ")) if lines else None), p.stderr


def test_tools_over_streamable_http_a_clean_step():
    code, r, err = run(4)
    assert code in (0, 4), err
    assert r["outcome"] == "ok" and r["sessions_ok"] == 4 and r["integrity_violations"] == 0
    m = r["mcp"]
    assert m["calls"] == 24 and m["calls_per_session"] == 6.0 and m["errors"] == 0
    assert m["transports"] == {"http": 24}
    assert m["tools"]["kv_get"]["calls"] == 12 and m["tools"]["kv_get"]["p50_ms"] == 20.0
    assert m["mcp_sessions"] == 0, "the SDK's default negotiates the stateless revision"
    assert "MCP: 24 tool calls (24 over http" in err


def test_one_legacy_session_shared_by_every_agent_session():
    code, r, err = run(4, MCP_MODE="legacy")
    assert code in (0, 4), err
    m = r["mcp"]
    assert (m["mcp_sessions"], m["sessions_per_mcp_session"]) == (1, 4.0), m


def test_a_dropped_mcp_result_is_a_violation_naming_the_tool():
    code, r, err = run(4, AGENT_BUG="drop_mcp_result")
    assert code == 3, err
    assert r["outcome"] == "integrity" and r["integrity_violations"] > 0
    assert "mcp" in err and "result of MCP tool kv_get (call " in err and "was dropped" in err


def test_a_stdio_server_per_session_is_reported_with_its_processes_and_memory():
    code, r, err = run(4, MCP_TRANSPORT="stdio")
    assert code in (0, 4), err
    assert r["outcome"] == "ok" and r["integrity_violations"] == 0
    m = r["mcp"]
    assert m["transports"] == {"stdio": 24}
    assert (m["mcp_sessions"], m["sessions_per_mcp_session"]) == (4, 1.0)
    s = m["stdio"]
    assert (s["peak_processes"], s["processes_per_session"], s["servers_seen"]) == (4, 1.0, 4), s
    assert 1.0 < s["rss_mb_per_server"] < 64 and s["peak_rss_mb"] < r["peak_rss_mb"], s
    assert "MCP stdio servers: 4 at once (1 per session)" in err


@pytest.mark.quiet
def test_a_two_second_tool_behind_a_pool_of_one_moves_the_line_as_predicted():
    """kv_get takes 2 s and the agent runs one MCP call at a time: at most 1 / 2.02 s ≈
    0.5 turns a second, and the line at 2 sessions (inflation ≈ C × 2.02 / 2.77)."""
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([BIN, "ramp", "--config", str(ROOT / "examples/mcp-agent/plimsoll-slow-tool.toml"),
                            "--ladder", "1,2,4", "--set", "turns=2", "--cpus", "1", "--out", out],
                           capture_output=True, text=True, env=env(), timeout=400)
        assert p.returncode == 0, p.stderr
        report = (pathlib.Path(out) / "report.md").read_text()
        doc = json.loads((pathlib.Path(out) / "result.json").read_text())
    assert "| 4 | mcp kv_get | 8 | 2000 | 2000 | 0 |" in report, report
    steps = {s["concurrency"]: s for s in doc["steps"]}
    assert steps[1]["mcp"]["tools"]["kv_get"]["p99_ms"] == 2000.0
    assert steps[1]["latency_inflation"] < 1.3, "the tool's time is the provider side's: in the ideal"
    assert 0.38 <= steps[4]["turns_per_s"] <= 0.55, steps[4]["turns_per_s"]
    assert steps[4]["latency_inflation"] > 2.0
    out = p.stdout + p.stderr
    assert "verdict: holds 2 sessions" in out and "; over from 4 (latency inflation" in out, out


AGENTS_VENV = pathlib.Path(os.environ.get("PLIMSOLL_AGENTS_VENV", "/tmp/venv-agents"))


def test_the_openai_agents_sdk_with_its_own_mcp_client():
    """A framework we did not write, with its own MCP client (agents.mcp), when its venv
    is there (examples/agents-sdk-mcp/requirements.txt; it pins a websockets older than
    this suite's, so it cannot share the suite's venv)."""
    import pytest

    if not (AGENTS_VENV / "bin" / "python").exists():
        pytest.skip(f"no OpenAI Agents SDK venv at {AGENTS_VENV} (see examples/agents-sdk-mcp/agent.py)")
    config = ROOT / "examples" / "agents-sdk-mcp" / "plimsoll.toml"
    for transport in ("http", "stdio"):
        full = {**os.environ, "PATH": str(AGENTS_VENV / "bin") + os.pathsep + os.environ["PATH"], "MCP_TRANSPORT": transport}
        p = subprocess.run([BIN, "run", "--config", str(config), "--concurrency", "4"],
                           capture_output=True, text=True, env=full, timeout=300)
        assert p.returncode in (0, 4), p.stderr
        r = json.loads([x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1].removeprefix("RESULT "))
        assert r["outcome"] == "ok" and r["integrity_violations"] == 0
        assert r["mcp"]["calls"] == 24 and r["mcp"]["transports"] == {transport: 24}
        if transport == "stdio":
            assert r["mcp"]["stdio"]["peak_processes"] == 4
