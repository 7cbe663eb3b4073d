"""The live view (`--live`), watched while a ramp runs: its page in a real browser
(headless Chromium) at two moments, and its metrics scraped by a real Prometheus (Debian's
package, started here) whose query API must give back each step's RESULT figures. Its
OTLP pushes and a ladder of calls watched live: test_live_pushed.py (a file of its own, so
the suite's workers run the two halves side by side).
"""

import json
import pathlib
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.parse

import pytest

from conftest import BIN, ROOT, free_port, get

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROMETHEUS = shutil.which("prometheus")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


class Run:
    """A ramp of the floor with --live, its stderr read as it comes, and a Prometheus
    scraping it every second when Prometheus is installed."""

    def __init__(self):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="plimsoll-live-"))
        self.prom = self.start_prometheus() if PROMETHEUS else None
        # Sessions of 60 turns: each level runs for about 40 s, long enough for the page's
        # two moments and the metrics' two scrapes within the second level.
        self.proc = subprocess.Popen(
            [BIN, "ramp", "--config", str(ROOT / "examples/floor/plimsoll.toml"), "--ladder", "4,8",
             "--no-cap", "--no-history", "--set", "turns=60", "--out", str(self.dir / "out"),
             "--live", f"127.0.0.1:{self.port}", "--live-linger", "6"],
            stderr=subprocess.PIPE, text=True,
        )
        self.err = []
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def start_prometheus(self):
        self.prom_port = free_port()
        cfg = self.dir / "prometheus.yml"
        cfg.write_text(
            "global: {scrape_interval: 1s, scrape_timeout: 900ms}\n"
            "scrape_configs:\n"
            f"  - job_name: plimsoll\n    static_configs: [{{targets: ['127.0.0.1:{self.port}']}}]\n"
        )
        return subprocess.Popen(
            [PROMETHEUS, f"--config.file={cfg}", f"--storage.tsdb.path={self.dir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.prom_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def wait_for(self, text, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            if any(text in line for line in self.err):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"never saw {text!r}:\n{''.join(self.err)[-3000:]}")

    def query(self, q):
        url = f"http://127.0.0.1:{self.prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
        body = json.loads(get(url))
        assert body["status"] == "success", body
        return body["data"]["result"]

    def close(self):
        for p in [self.proc, self.prom]:
            if p and p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def run():
    r = Run()
    yield r
    r.close()


def now_panel(dom):
    start = dom.index('id="now"')
    return dom[start:dom.index("</div>", start)]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test installs it where it can)")
def dump_dom(url, profile):
    dom = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=2500", "--dump-dom", url],
        capture_output=True, text=True, timeout=60,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout


def test_the_page_fills_in_and_moves_while_the_ramp_runs(run, tmp_path):
    run.wait_for(f"live: {run.base}/")
    # While the first level runs, nothing has finished: the page claims no verdict, and
    # the level's point so far is drawn apart (hollow, "running"), not as a measured one.
    end = time.time() + 30
    while 'class="running"' not in json.loads(get(run.base + "/parts"))["report"]:
        assert time.time() < end, "the first level's point never showed"
        time.sleep(0.5)
    first = dump_dom(run.base + "/", tmp_path / "first")
    assert not any("|        4 |" in l for l in run.err), "the first level ended before the page was read"
    assert "Verdict:</b> none yet — the first level is running" in first, first[:3000]
    assert "already collapsed" not in first and "ceiling:" not in first, first[:3000]
    assert 'class="running"' in first and ">running</text>" in first, first[:3000]
    run.wait_for("|        4 |")  # the first level finished: its row, and the second running
    doms, shots = [], []
    for i in range(2):
        url = run.base + "/"
        doms.append(dump_dom(url, tmp_path / f"d{i}"))
        shot = tmp_path / f"live{i}.png"
        s = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / f's{i}'}", "--virtual-time-budget=2500",
             "--window-size=1240,1400", f"--screenshot={shot}", url],
            capture_output=True, text=True, timeout=60,
        )
        assert s.returncode == 0 and shot.exists(), s.stderr[-2000:]
        shots.append(shot.read_bytes())
        time.sleep(2)
    for dom in doms:
        # The level running now, the verdict so far over the finished level, the report's
        # own charts and table; the running level's point still apart.
        assert "level 8 sessions" in now_panel(dom), now_panel(dom)
        assert "Verdict:" in dom and "<svg" in dom and "<table>" in dom, dom[:3000]
        assert "none yet" not in dom and 'class="running"' in dom, dom[:3000]
    assert now_panel(doms[0]) != now_panel(doms[1]), "the figures did not move"
    assert all(len(b) > 30_000 for b in shots), [len(b) for b in shots]
    assert shots[0] != shots[1]


def test_the_metrics_count_the_level_running_now(run):
    run.wait_for(f"live: {run.base}/")
    run.wait_for("|        4 |")
    first = get(run.base + "/metrics")
    time.sleep(2)
    second = get(run.base + "/metrics")

    def turns(text):
        line = next((l for l in text.splitlines() if l.startswith("plimsoll_turns_total{")), None)
        assert line, f"no level running when scraped:\n{text}"
        return float(line.rsplit(" ", 1)[1])

    assert 'level="8"' in first and "# TYPE plimsoll_turn_duration_seconds histogram" in first
    assert turns(second) > turns(first) > 0
    assert 'plimsoll_step_turns_per_second{run=' in first and 'level="4"' in first


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed (scripts/test installs it where it can)")
def test_prometheus_finds_each_steps_result_figures(run):
    assert run.proc.wait(timeout=300) == 0, "".join(run.err)[-3000:]
    doc = json.loads((run.dir / "out" / "result.json").read_text())
    time.sleep(2)

    def by_level(q):
        return {r["metric"]["level"]: float(r["value"][1]) for r in run.query(q)}

    rate = by_level('last_over_time(plimsoll_step_turns_per_second{repeat="0"}[10m])')
    threads = by_level('last_over_time(plimsoll_step_peak_threads{repeat="0"}[10m])')
    counted = by_level("max_over_time(plimsoll_turn_duration_seconds_count[10m])")
    assert sorted(rate) == ["4", "8"], rate
    for s in doc["steps"]:
        level = str(s["concurrency"])
        assert abs(rate[level] - s["turns_per_s"]) < 1e-9, (level, rate, s["turns_per_s"])
        assert threads[level] == s["peak_threads"]
        # Counted each second while the level ran: at most its turns, most of them.
        assert 0.5 * s["turns"] <= counted[level] <= s["turns"], (level, counted, s["turns"])
    quantile = run.query("histogram_quantile(0.5, max_over_time(plimsoll_turn_duration_seconds_bucket[10m]))")
    assert quantile and all(0 < float(r["value"][1]) < 120 for r in quantile), quantile
    # The Grafana dashboard's every query is one Prometheus accepts.
    dash = json.loads((ROOT / "examples/grafana/plimsoll.json").read_text())
    for panel in dash["panels"]:
        for target in panel["targets"]:
            run.query(target["expr"])
