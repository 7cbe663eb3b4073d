"""Injected failures, seen through the official SDKs and their own retry logic."""

import time

import anthropic
import openai
import pytest

from conftest import Mock, get_json, post_json
from conftest import anthropic_client as ant
from conftest import openai_client as oai

SCENARIO = """
unknown_model = "error"
[defaults]
ttft_ms = 5
tok_ms = 1
output_tokens = 10
[models."limited"]
failures = { rate_limit = 1.0, retry_after_ms = 300 }
[models."flaky"]
failures = { rate_limit = 0.5, retry_after_ms = 50 }
[models."broken"]
failures = { server_error = 1.0 }
[models."busy"]
failures = { overloaded = 1.0, retry_after_ms = 100 }
[models."dropping"]
failures = { reset = 1.0 }
[models."cutting"]
output_tokens = 40
failures = { cut = 1.0 }
[models."stalling"]
failures = { stall = 1.0, stall_ms = 400 }
[models."spiky"]
failures = { spike = 1.0, spike_ms = 400 }
[models."fine"]
"""
USER = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def fmock():
    m = Mock(SCENARIO)
    yield m
    m.stop()


def session_of(m, name):
    return get_json(m.base, "/plimsoll/ledger")["sessions"][name]


def marked(session, text="hello"):
    return [{"role": "user", "content": f"[[plimsoll session={session} nonce=psn{0:016x} turn=1]] {text}"}]


def test_rate_limit_headers_drive_the_sdk_retries(fmock):
    t0 = time.perf_counter()
    with pytest.raises(openai.RateLimitError) as e:
        oai(fmock, retries=2).chat.completions.create(model="limited", messages=marked("rl"))
    elapsed = time.perf_counter() - t0
    # Two retries, each after the announced 300 ms (the SDK honours retry-after-ms).
    assert elapsed >= 0.6, elapsed
    assert e.value.response.headers["retry-after"] == "1"
    assert e.value.response.headers["retry-after-ms"] == "300"
    assert e.value.response.headers["x-ratelimit-remaining-requests"] == "0"
    s = session_of(fmock, "rl")
    assert s["llm_calls"] == 3 and s["retries"] == 2
    assert s["injected_failures"]["rate_limit"] == 3


def test_anthropic_rate_limit_headers(fmock):
    with pytest.raises(anthropic.RateLimitError) as e:
        ant(fmock).messages.create(model="limited", max_tokens=50, messages=USER)
    h = e.value.response.headers
    assert h["anthropic-ratelimit-requests-remaining"] == "0"
    assert h["anthropic-ratelimit-requests-reset"].endswith("Z")
    assert e.value.body["error"]["type"] == "rate_limit_error"


def test_a_retry_can_succeed(fmock):
    r = oai(fmock, retries=8).chat.completions.create(model="flaky", messages=marked("flaky"))
    assert r.choices[0].message.content
    s = session_of(fmock, "flaky")
    assert s["injected_failures"]["rate_limit"] == s["retries"] == s["llm_calls"] - 1


def test_server_errors_and_overload_raise_the_sdk_classes(fmock):
    with pytest.raises(openai.InternalServerError) as e:
        oai(fmock).chat.completions.create(model="broken", messages=USER)
    assert e.value.status_code == 500
    with pytest.raises(openai.InternalServerError) as e:
        oai(fmock).responses.create(model="busy", input="hi")
    assert e.value.status_code == 503
    with pytest.raises(anthropic.OverloadedError) as e:
        ant(fmock).messages.create(model="busy", max_tokens=50, messages=USER)
    assert e.value.status_code == 529
    assert e.value.body["error"]["type"] == "overloaded_error"
    with pytest.raises(anthropic.InternalServerError) as e:
        ant(fmock).messages.create(model="broken", max_tokens=50, messages=USER)
    assert e.value.body["error"]["type"] == "api_error"


def test_dropped_connection_is_a_connection_error(fmock):
    with pytest.raises(openai.APIConnectionError):
        oai(fmock).chat.completions.create(model="dropping", messages=USER)
    with pytest.raises(anthropic.APIConnectionError):
        ant(fmock).messages.create(model="dropping", max_tokens=50, messages=USER)


def test_cut_stream_breaks_mid_way(fmock):
    got = []
    with pytest.raises(Exception) as e:  # the SDK surfaces the broken transfer as its transport error
        for c in oai(fmock).chat.completions.create(model="cutting", messages=USER, stream=True):
            if c.choices and c.choices[0].delta.content:
                got.append(c.choices[0].delta.content)
    assert not isinstance(e.value, AssertionError)
    assert 0 < len(got) < 40, "some deltas arrive, then the stream breaks"


def test_stall_and_spike_delay_the_stream(fmock):
    for model in ["stalling", "spiky"]:
        t0 = time.perf_counter()
        text = "".join(
            c.choices[0].delta.content or ""
            for c in oai(fmock).chat.completions.create(model=model, messages=USER, stream=True)
            if c.choices
        )
        assert len(text.split()) == 10
        assert time.perf_counter() - t0 >= 0.4, model


def test_stable_variant_never_fails(fmock):
    for _ in range(5):
        r = oai(fmock).chat.completions.create(model="limited-stable", messages=USER)
        assert r.choices[0].finish_reason == "stop"


def test_rates_change_live_then_recover(fmock):
    post_json(fmock.base, "/plimsoll/admin/failures", {"model": "fine", "overloaded": 1.0})
    with pytest.raises(openai.InternalServerError):
        oai(fmock).chat.completions.create(model="fine", messages=USER)
    post_json(fmock.base, "/plimsoll/admin/failures", {"model": "fine", "reset": True})
    assert oai(fmock).chat.completions.create(model="fine", messages=USER).choices[0].message.content


def test_environment_sets_failures(tmp_path):
    import os

    os.environ["PLIMSOLL_FAIL_SERVER_ERROR"] = "1"
    try:
        m = Mock("[models.x]\n")
    finally:
        del os.environ["PLIMSOLL_FAIL_SERVER_ERROR"]
    try:
        with pytest.raises(openai.InternalServerError):
            oai(m).chat.completions.create(model="x", messages=USER)
    finally:
        m.stop()


def test_metrics_count_injected_failures(fmock):
    import urllib.request

    text = urllib.request.urlopen(fmock.base + "/metrics", timeout=5).read().decode()
    assert "# TYPE plimsoll_mock_injected_failures_total counter" in text
    line = next(x for x in text.splitlines() if x.startswith('plimsoll_mock_injected_failures_total{kind="rate_limit"}'))
    assert float(line.split()[-1]) >= 3


def test_anthropic_sdk_retries_overload_after_the_announced_delay(fmock):
    t0 = time.perf_counter()
    with pytest.raises(anthropic.OverloadedError) as e:
        ant(fmock, retries=2).messages.create(model="busy", max_tokens=50, messages=marked("busy-a"))
    assert time.perf_counter() - t0 >= 0.2
    assert e.value.response.headers["retry-after-ms"] == "100"
    s = session_of(fmock, "busy-a")
    assert s["llm_calls"] == 3 and s["retries"] == 2 and s["injected_failures"]["overloaded"] == 3
