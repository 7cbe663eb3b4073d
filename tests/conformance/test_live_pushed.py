"""The live view's other two faces, apart from test_live.py's ramp so that the suite's
workers run them side by side: its metrics pushed over OTLP/HTTP and decoded with the
official proto, and `--live` on a ladder of voice calls, counted in calls.
"""

import json
import subprocess
import threading
import time

from conftest import BIN, ROOT, free_port, get


def test_otlp_pushes_decode_with_the_official_proto_and_carry_each_steps_figures(tmp_path):
    """`--otlp`: the metrics pushed over OTLP/HTTP (JSON), decoded by a receiver with the
    official opentelemetry-proto package; the last push carries each step's RESULT figures."""
    import http.server

    from google.protobuf import json_format
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    got = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            req = ExportMetricsServiceRequest()
            json_format.Parse(body, req)  # refuses any field the proto does not have
            got.append((self.path, self.headers["Content-Type"], req))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "out"
    try:
        p = subprocess.run(
            [BIN, "ramp", "--config", str(ROOT / "examples/floor/plimsoll.toml"), "--ladder", "2,4", "--no-cap",
             "--no-history", "--set", "turns=10", "--out", str(out),
             "--otlp", f"http://127.0.0.1:{server.server_address[1]}", "--otlp-every", "1"],
            capture_output=True, text=True, timeout=300,
        )
    finally:
        server.shutdown()
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(got) >= 3, (len(got), p.stderr[-2000:])
    assert all(path == "/v1/metrics" and ctype == "application/json" for path, ctype, _ in got)
    last = got[-1][2].resource_metrics[0]
    resource = {a.key: a.value.string_value for a in last.resource.attributes}
    assert resource["service.name"] == "plimsoll" and resource["service.instance.id"], resource
    metrics = {m.name: m for m in last.scope_metrics[0].metrics}
    doc = json.loads((out / "result.json").read_text())
    rate = {
        {a.key: a.value.string_value for a in d.attributes}["level"]: d.as_double
        for d in metrics["plimsoll.step_turns"].gauge.data_points
    }
    for s in doc["steps"]:
        assert abs(rate[str(s["concurrency"])] - s["turns_per_s"]) < 1e-9, (rate, s["turns_per_s"])
    assert metrics["plimsoll.step_turns"].unit == "1/s"
    # While a level ran: its turns as a monotonic cumulative sum, its latency a histogram
    # whose buckets add up to its count.
    during = [r.resource_metrics[0].scope_metrics[0].metrics for _, _, r in got]
    sums = [m for ms in during for m in ms if m.name == "plimsoll.turns"]
    assert sums and all(m.sum.is_monotonic and m.sum.aggregation_temporality == 2 for m in sums)
    hists = [m for ms in during for m in ms if m.name == "plimsoll.turn_duration"]
    assert hists and hists[-1].unit == "s"
    point = hists[-1].histogram.data_points[0]
    assert sum(point.bucket_counts) == point.count > 0
    assert len(point.bucket_counts) == len(point.explicit_bounds) + 1


def test_a_ladder_of_calls_is_watched_in_calls(tmp_path):
    """`--live` on a ramp of voice calls (the Twilio bot of the calls tests): the view
    counts calls, the level running now has calls in flight, and the last scrape before
    the view closes counts every call the ramp's RESULT counts."""
    from voice_calls_common import bot_dir

    d = bot_dir(tmp_path, turns=2)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [BIN, "ramp", "--ladder", "1,2", "--cpus", "2", "--no-partition", "--no-history", "--json",
         "--live", f"127.0.0.1:{port}", "--live-linger", "5"],
        cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    out = {}
    threading.Thread(target=lambda: out.update(stdout=proc.stdout.read()), daemon=True).start()
    err = []
    threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True).start()
    scrapes, parts = [], []
    while proc.poll() is None:
        try:
            scrapes.append(get(base + "/metrics"))
            if not parts and "plimsoll_sessions_in_flight{" in scrapes[-1]:
                parts.append(json.loads(get(base + "/parts")))
        except OSError:
            pass
        time.sleep(0.5)
    assert proc.returncode == 0, "".join(err)[-3000:]
    doc = json.loads(out["stdout"])
    assert any('plimsoll_info{run="plimsoll.toml",unit="calls"' in s for s in scrapes), scrapes[-1:]
    in_flight = [float(l.rsplit(" ", 1)[1]) for s in scrapes for l in s.splitlines()
                 if l.startswith("plimsoll_sessions_in_flight{")]
    assert in_flight and max(in_flight) >= 1, in_flight
    # The page's panel for the level running now speaks of calls.
    assert parts and "<b>level 1 call</b>" in parts[0]["now"], parts[:1]
    assert "session" not in parts[0]["now"], parts[0]["now"]
    # Each finished step's calls that went through, as its RESULT says (a step re-run on a
    # busy machine is its own series: repeat="1").
    last = scrapes[-1]
    for s in doc["steps"]:
        want = f'plimsoll_step_sessions_ok{{run="plimsoll.toml",arm="",level="{s["concurrency"]}",'
        said = [float(l.rsplit(" ", 1)[1]) for l in last.splitlines() if l.startswith(want)]
        assert s["sessions_ok"] in said, (s["concurrency"], s["sessions_ok"], said, last)
