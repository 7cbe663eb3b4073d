"""Every example with a requirements.txt runs from its own install files, as its header
says: scripts/test builds a venv for each from that file alone (`.venv-examples/NAME`, kept
while the file is unchanged) and this test imports the example's own modules in it, so a
module the example imports and its requirements do not install fails here, not in a
newcomer's first `plimsoll check`. A venv built from a requirements file that lacks
FastAPI (tests/examples/pipecat-webrtc-without-fastapi.txt: the Pipecat WebRTC example's
file as it was) proves the check fails on exactly that.
"""

import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENVS = pathlib.Path(os.environ.get("PLIMSOLL_EXAMPLE_VENVS", ROOT / ".venv-examples"))
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/requirements.txt"))


def venv_python(name):
    py = VENVS / name / "bin" / "python"
    if not py.exists() or not (VENVS / name / ".installed.lock").exists():
        pytest.skip(f"no venv built for {name} ({VENVS / name}): scripts/test builds it")
    return py


def import_modules(py, example):
    """Imports each of the example's own modules with `py`, from the example's directory,
    as its command does; returns (exit code, what it printed)."""
    d = ROOT / "examples" / example
    mods = sorted(p.stem for p in d.glob("*.py"))
    assert mods, f"examples/{example} has no Python module"
    # Each module sees the argv and the variables its command would (Plimsoll points both
    # base URLs at its mock); nothing is called, so the port is a closed one.
    code = ("import importlib, os, sys\n"
            "for m in os.environ['MODULES'].split():\n"
            "    sys.argv = [m + '.py']\n"
            "    importlib.import_module(m)\n")
    env = {**os.environ, "MODULES": " ".join(mods), "OPENAI_API_KEY": "sk-mock",
           "ANTHROPIC_API_KEY": "sk-mock", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
           "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "PYTHONPATH": str(d)}
    p = subprocess.run([str(py), "-c", code], cwd=d, env=env, capture_output=True,
                       text=True, timeout=180)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("example", EXAMPLES)
def test_an_example_imports_in_a_venv_of_its_own_requirements(example):
    rc, out = import_modules(venv_python(example), example)
    assert rc == 0, f"examples/{example}: its modules do not import in a venv of its requirements.txt:\n{out[-3000:]}"


def test_a_requirements_file_missing_a_module_fails_the_check():
    rc, out = import_modules(venv_python("_pipecat-webrtc-without-fastapi"), "pipecat-webrtc")
    assert rc != 0 and "No module named 'fastapi'" in out, out[-3000:]


def test_every_example_with_requirements_is_pinned_exactly():
    """Each line names one version (`==`): a new upstream release cannot change an example."""
    for example in EXAMPLES:
        for line in (ROOT / "examples" / example / "requirements.txt").read_text().splitlines():
            line = line.split("#")[0].strip()
            if line:
                assert "==" in line, f"examples/{example}/requirements.txt: {line!r} is not pinned (NAME==VERSION)"


def pins(lines):
    """NAME==VERSION lines as {name: version}, names normalised as pip does, extras dropped."""
    out = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            name = re.sub(r"[-_.]+", "-", name.split("[")[0]).lower()
            out[name] = version.strip()
    return out


@pytest.mark.parametrize("example", EXAMPLES)
def test_an_examples_pins_are_everything_its_venv_holds(example):
    """A full freeze: what pip installed from the file is exactly what it names, so no
    package it pulls in is left to float to its newest release."""
    py = venv_python(example)
    p = subprocess.run([str(py), "-m", "pip", "freeze", "--disable-pip-version-check"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    want = pins((ROOT / "examples" / example / "requirements.txt").read_text().splitlines())
    have = pins(p.stdout.splitlines())
    floating = sorted(f"{n}=={v}" for n, v in have.items() if want.get(n) != v)
    assert not floating, f"examples/{example}/requirements.txt does not pin what its venv holds: {floating} (regenerate it with pip freeze)"
