"""Starts `plimsoll mock` for the conformance suite and hands out official SDK clients.

The binary is the release build made by scripts/test (override with PLIMSOLL_BIN).
Each mock listens on 127.0.0.1 with a port the OS picks; its first stdout line is
`listening http://ADDR`.
"""

import os
import re
import pathlib
import socket
import subprocess
import tempfile
import urllib.request

import anthropic
import openai
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("PLIMSOLL_BIN", str(ROOT / "target" / "release" / "plimsoll"))
EXAMPLE_VENVS = pathlib.Path(os.environ.get("PLIMSOLL_EXAMPLE_VENVS", ROOT / ".venv-examples"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    """A GET's body as text."""
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def example_copy(name, into):
    """examples/NAME copied into `into` as a newcomer would have it: its files, and `.venv`
    the venv scripts/test built from its own requirements.txt alone (skipped without it)."""
    venv = EXAMPLE_VENVS / name
    if not (venv / ".installed.lock").exists():
        import pytest
        pytest.skip(f"no venv built for examples/{name} ({venv}): scripts/test builds it")
    d = pathlib.Path(into)
    for f in (ROOT / "examples" / name).iterdir():
        if f.is_file():
            (d / f.name).write_bytes(f.read_bytes())
    (d / ".venv").symlink_to(venv)
    return d


def tokens(text):
    """Tokens by the mock's rule: each word is one, and so is each sentence's full stop
    (its replies are sentences, as a model writes them)."""
    return len(re.findall(r"[^\s.]+|\.", text))


FAST = """
unknown_model = "error"
[defaults]
ttft_ms = 20
tok_ms = 1
output_tokens = 12
tokens_per_chunk = 1
[models."fast"]
[models."gpt-4o-mini"]
[models."claude-plimsoll-1"]
[models."timed"]
ttft_ms = 200
tok_ms = 5
output_tokens = 40
[models."chunky"]
tokens_per_chunk = 4
output_tokens = 30
[models."long"]
output_tokens = 400
tok_ms = 0
"""


class Mock:
    def __init__(self, scenario: str, *extra: str):
        self.dir = tempfile.TemporaryDirectory()
        path = pathlib.Path(self.dir.name) / "scenario.toml"
        path.write_text(scenario)
        self.proc = subprocess.Popen(
            [BIN, "mock", "--listen", "127.0.0.1:0", "--scenario", str(path), "--seed", "1", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening http://"):
            self.proc.kill()
            raise RuntimeError(f"mock did not start: {line!r} {self.proc.stderr.read()}")
        self.base = line.removeprefix("listening ")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.dir.cleanup()


@pytest.fixture(scope="session")
def mock():
    m = Mock(FAST, "--max-body-mb", "1")
    yield m
    m.stop()


@pytest.fixture
def oai(mock):
    return openai.OpenAI(base_url=mock.base + "/v1", api_key="dummy", max_retries=0)


@pytest.fixture
def aoai(mock):
    return openai.AsyncOpenAI(base_url=mock.base + "/v1", api_key="dummy", max_retries=0)


@pytest.fixture
def ant(mock):
    return anthropic.Anthropic(base_url=mock.base, api_key="dummy", max_retries=0)


@pytest.fixture
def aant(mock):
    return anthropic.AsyncAnthropic(base_url=mock.base, api_key="dummy", max_retries=0)


def openai_client(m, key="x", retries=0):
    """An OpenAI client of mock `m` with API key `key` and the SDK's own retries."""
    return openai.OpenAI(base_url=m.base + "/v1", api_key=key, max_retries=retries)


def anthropic_client(m, key="x", retries=0):
    """An Anthropic client of mock `m` with API key `key` and the SDK's own retries."""
    return anthropic.Anthropic(base_url=m.base, api_key=key, max_retries=retries)


def get_json(base: str, path: str):
    """GET a Plimsoll admin endpoint."""
    import json
    import urllib.request

    with urllib.request.urlopen(base + path, timeout=10) as r:
        return json.loads(r.read())


def post_json(base: str, path: str, body: dict):
    import json
    import urllib.request

    req = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())
