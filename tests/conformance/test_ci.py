"""Plimsoll as CI reads it: the GitHub Actions workflow docs/ci.md shows is linted by
actionlint and passes only flags `plimsoll compare --help` lists; `compare --junit`
writes JUnit XML whose cases are the gates (a breached gate a failure, with its figures);
`--summary` and $GITHUB_STEP_SUMMARY get the pull-request-sized Markdown."""

import os
import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
import yaml

from conftest import BIN, ROOT

ACTIONLINT = "github.com/rhysd/actionlint/cmd/actionlint@v1.7.12"


def workflow_text():
    doc = (ROOT / "docs" / "ci.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    assert len(blocks) == 1, "docs/ci.md shows one workflow"
    return blocks[0]


def actionlint(tmp):
    found = shutil.which("actionlint")
    if found:
        return found
    if not shutil.which("go"):
        pytest.skip("neither actionlint nor go is on PATH")
    gobin = pathlib.Path(tmp) / "bin"
    p = subprocess.run(["go", "install", ACTIONLINT], env={**os.environ, "GOBIN": str(gobin)},
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return str(gobin / "actionlint")


def test_the_documented_workflow_lints_and_uses_only_real_flags(tmp_path):
    text = workflow_text()
    wf = tmp_path / ".github" / "workflows" / "plimsoll.yml"
    wf.parent.mkdir(parents=True)
    wf.write_text(text)
    p = subprocess.run([actionlint(tmp_path), "-shellcheck=", "-pyflakes=", str(wf)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    steps = yaml.safe_load(text)["jobs"]["compare"]["steps"]
    run = next(s["run"] for s in steps if "plimsoll compare" in s.get("run", ""))
    helptext = subprocess.run([BIN, "compare", "--help"], capture_output=True, text=True).stdout
    flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", run))
    assert {"--junit", "--summary", "--fail-on"} <= flags
    for f in flags:
        assert re.search(rf"\s{f}[\s=<]", helptext), f"{f} is not a flag of plimsoll compare"


def compare(tmp, fail_on, branch_cpu_ms):
    floor = ROOT / "examples" / "floor"
    cmd = f"{BIN} floor --listen 127.0.0.1:{{{{port}}}} --model memory"
    summary_env = pathlib.Path(tmp) / "step-summary.md"
    p = subprocess.run(
        [BIN, "compare", "--config", str(floor / "plimsoll.toml"),
         "--base-cmd", cmd, "--branch-cmd", f"{cmd} --cpu-ms-per-call {branch_cpu_ms}",
         "--ladder", "2", "--repeat", "1", "--no-history", "--no-partition",
         "--fail-on", fail_on,
         "--junit", str(pathlib.Path(tmp) / "junit.xml"),
         "--summary", str(pathlib.Path(tmp) / "summary.md")],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary_env)},
    )
    return p, ET.parse(pathlib.Path(tmp) / "junit.xml").getroot(), summary_env


def test_compare_writes_junit_cases_for_its_gates_and_the_job_summary(tmp_path):
    p, root, step_summary = compare(tmp_path, "p99_session_ms>+1000%,ceiling>+0%", 0)
    assert p.returncode == 0, p.stderr
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    names = [c.get("name") for c in cases]
    assert names == ["p99_session_ms at 2 sessions ≤ +1000 %", "ceiling may drop ≤ +0 %"], names
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert "base " in cases[0].find("system-out").text
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("**Plimsoll compare: pass**"), summary
    assert summary.strip() in step_summary.read_text()


def test_a_breached_gate_is_a_failed_case_with_its_figures(tmp_path):
    # The branch burns 40 CPU ms after each LLM call (3 a turn): its sessions take longer.
    p, root, _ = compare(tmp_path, "p99_session_ms>+5%", 40)
    assert p.returncode == 2, p.stderr
    suite = root.find("testsuite")
    assert suite.get("failures") == "1", ET.tostring(root, encoding="unicode")
    failure = suite.find("testcase/failure")
    assert failure.get("message").startswith("2 sessions: p99_session_ms +"), failure.get("message")
    assert (tmp_path / "summary.md").read_text().startswith("**Plimsoll compare: FAIL** — 1 gate breached")
