"""The HTML report, rendered by a real browser (headless Chromium).

It must load with no console message (it has no script and no external resource), hold
its twelve charts, the verdict on top and the step table, and a screenshot must show them (a blank page is a few KB of PNG).
"""

import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, ROOT

# Judged on a quiet machine (pytest.ini: quiet).
pytestmark = pytest.mark.quiet

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def report():
    out = pathlib.Path(tempfile.mkdtemp(prefix="plimsoll-html-"))
    p = subprocess.run(
        [BIN, "ramp", "--config", str(ROOT / "examples/floor/plimsoll.toml"), "--ladder", "4,8,16,32",
         "--no-cap", "--no-history", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stderr
    yield out / "report.html"
    shutil.rmtree(out, ignore_errors=True)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test installs it where it can)")
def test_report_renders_in_chromium_with_its_charts(report, tmp_path):
    url = report.as_uri()
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'u1'}", "--enable-logging=stderr", "--v=0", "--dump-dom", url],
        capture_output=True, text=True, timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    # Eight measures, the SUT's connections (to the mock) and open files, and the two
    # figures that say whether the machine was quiet (others on its cores, run-queue wait).
    assert dom.stdout.count("<svg") == 12
    for title in ["Connections (peak)", "Open files (fds)", "Other processes on the SUT", "Run-queue wait"]:
        assert title in dom.stdout, title
    assert "How to read this" in dom.stdout and "n=32" in dom.stdout
    # The verdict leads, before any chart; the steps follow as a table.
    assert dom.stdout.index("Verdict:") < dom.stdout.index("<svg")
    assert "holds" in dom.stdout and "<table>" in dom.stdout
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
    shot = tmp_path / "report.png"
    s = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'u2'}", "--window-size=1240,1800", f"--screenshot={shot}", url],
        capture_output=True, text=True, timeout=120,
    )
    assert s.returncode == 0 and shot.exists(), s.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 1240
    assert len(png) > 40_000, f"the screenshot looks blank ({len(png)} bytes)"


@pytest.fixture(scope="module")
def thread_report():
    """A ramp whose wall is one thread: the floor serving on one event loop (examples/event-loop)."""
    out = pathlib.Path(tempfile.mkdtemp(prefix="plimsoll-html-thread-"))
    p = subprocess.run(
        [BIN, "ramp", "--ladder", "4,16,32", "--cpus", "2", "--no-partition", "--no-history", "--out", str(out)],
        cwd=ROOT / "examples" / "event-loop", capture_output=True, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stderr
    yield out / "report.html", p.stderr
    shutil.rmtree(out, ignore_errors=True)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test installs it where it can)")
def test_a_thread_walls_report_draws_the_thread(thread_report, tmp_path):
    """The report draws the wall it names (issue 40): a verdict of one thread gets the busiest
    thread's share of a core per level, the 100 % line drawn, before every other chart."""
    report, err = thread_report
    assert "wall: one thread" in err, err
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'u1'}", "--dump-dom", report.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert "Busiest thread (% of a core)" in html, html[:3000]
    assert "one core" in html and "floor-loop" in html
    # The wall's chart comes first: the evidence for the headline.
    assert html.index("Busiest thread") < html.index("Throughput (turns/s)")
    assert html.count("<svg") == 13
    shot = tmp_path / "thread.png"
    s = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'u2'}", "--window-size=1240,900", f"--screenshot={shot}", report.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert s.returncode == 0 and shot.exists(), s.stderr[-2000:]
    assert len(shot.read_bytes()) > 40_000
