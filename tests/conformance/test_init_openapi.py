"""`plimsoll init --from-openapi` against real agent servers from the registries, as a new
user meets them: start the server, point init at its /openapi.json, pick the turn's
operation, and `plimsoll check` the written session with no hand edits.

agno's AgentOS (examples/agno, in tests/requirements.lock) takes its runs as multipart
form fields under an agent id found by a list; LangGraph's API server (examples/langgraph,
its own venv: skipped when that is not made) runs a thread made by a create call.
"""

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import BIN, ROOT


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(cmd, cwd, port, doc="/openapi.json", env=None):
    p = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, "PORT": str(port), "OPENAI_API_KEY": "x",
                         "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", **(env or {})},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{doc}", timeout=1).read()
            return p
        except OSError:
            time.sleep(0.25)
    os.killpg(p.pid, 9)
    raise RuntimeError(f"{cmd} did not serve {doc}")


def init_then_check(project, port, operation, command):
    init = subprocess.run([BIN, "init", "--from-openapi", f"http://127.0.0.1:{port}/openapi.json",
                           "--operation", operation, "--command", command],
                          cwd=project, capture_output=True, text=True, timeout=60)
    assert init.returncode == 0, init.stderr
    return init


def test_agno_agentos_multipart_runs(tmp_path):
    app = ROOT / "examples" / "agno" / "app.py"
    port = free_port()
    server = serve([sys.executable, str(app)], tmp_path, port)
    try:
        init_then_check(tmp_path, port, "create_agent_run", f"{sys.executable} {app}")
    finally:
        os.killpg(server.pid, 9)
    session = (tmp_path / "session.toml").read_text()
    assert "multipart = { message = \"[[plimsoll session={{session}}" in session, session
    assert 'extract = { agent_id = "/0/id" }' in session, session
    check = subprocess.run([BIN, "check", "--no-partition"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert "OK: 6 turns went through in 2 sessions side by side; the SUT called the mock 6 times" in check.stderr, check.stderr


LANGGRAPH = ROOT / "examples" / "langgraph"


@pytest.mark.skipif(not (LANGGRAPH / ".venv" / "bin" / "langgraph").exists(),
                    reason="examples/langgraph/.venv not made (see its plimsoll.toml)")
def test_langgraph_api_server_thread_runs(tmp_path):
    for f in ("graph.py", "langgraph.json"):
        shutil.copy(LANGGRAPH / f, tmp_path / f)
    (tmp_path / ".venv").symlink_to(LANGGRAPH / ".venv")
    port = free_port()
    command = ".venv/bin/langgraph dev --port {{port}} --host 127.0.0.1 --no-browser --no-reload"
    env = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGSMITH_TRACING": "false"}
    server = serve(command.replace("{{port}}", str(port)).split(), tmp_path, port, env=env)
    try:
        init_then_check(tmp_path, port, "POST /threads/{thread_id}/runs/wait", command)
    finally:
        os.killpg(server.pid, 9)
    session = (tmp_path / "session.toml").read_text()
    assert 'extract = { thread_id = "/thread_id" }' in session, session
    assert 'extract = { assistant_id = "/0/assistant_id" }' in session, session
    check = subprocess.run([BIN, "check", "--no-partition"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=180, env={**os.environ, **env})
    assert check.returncode == 0, check.stderr
    assert "OK: 6 turns went through in 2 sessions side by side" in check.stderr, check.stderr


def test_a_session_field_gets_a_value_per_session_and_a_shared_one_is_named(tmp_path):
    """A FastAPI agent whose POST /chat takes {"session": str, "message": str} (issue 40):
    the written session sends each session's own name; `check` runs two sessions side by
    side and passes; the same file with a constant `session` is caught by `check` and named
    by `run -c 4` as the session file's doing, not the SUT's."""
    app = ROOT / "tests" / "conformance" / "apps" / "session_agent.py"
    port = free_port()
    server = serve([sys.executable, str(app)], tmp_path, port)
    try:
        init_then_check(tmp_path, port, "POST /chat", f"{sys.executable} {app}")
    finally:
        os.killpg(server.pid, 9)
    session = (tmp_path / "session.toml").read_text()
    assert '"session":"{{session}}"' in session, session
    check = subprocess.run([BIN, "check", "--no-partition"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert "OK: 6 turns went through in 2 sessions side by side" in check.stderr, check.stderr
    # The constant an older init wrote: one conversation for every session.
    (tmp_path / "session.toml").write_text(session.replace('"session":"{{session}}"', '"session":"plimsoll"'))
    bad = subprocess.run([BIN, "check", "--no-partition"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 3, bad.stderr
    assert "every session sent the same value in a field that names a conversation: `session` = \"plimsoll\" in the JSON body of request `turn`" in bad.stderr, bad.stderr
    assert "follow from this, not from the SUT" in bad.stderr and "session.toml" in bad.stderr, bad.stderr
    run = subprocess.run([BIN, "run", "-c", "4", "--no-partition"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert "outcome: integrity" in run.stderr, run.stderr
    assert "the session file's doing, not the SUT's" in run.stderr, run.stderr
