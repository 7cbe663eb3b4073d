"""Injected failures, seen through the official SDKs and their own retry logic."""

import time

import anthropic
import openai
import pytest

from conftest import Mock, get_json, post_json, tokens
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
        assert tokens(text) == 10
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


SCRIPTED = """
unknown_model = "error"
[defaults]
ttft_ms = 5
tok_ms = 1
output_tokens = 30
[models."first2"]
failures = { retry_after_ms = 100 }
[[models."first2".fail]]
attempts = 2
with = "overloaded"
[models."every3"]
[[models."every3".fail]]
every = 3
with = "server_error"
[models."cut20"]
[[models."cut20".fail]]
attempts = 1
with = "cut"
at_token = 20
"""


@pytest.fixture(scope="module")
def smock():
    m = Mock(SCRIPTED)
    yield m
    m.stop()


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_the_first_two_attempts_fail_and_the_sdks_retry_as_documented(smock, sdk):
    # Both SDKs retry a 529 / 503 twice by default, after the retry-after-ms they are sent.
    t0 = time.perf_counter()
    if sdk == "anthropic":
        r = ant(smock, retries=2).messages.create(model="first2", max_tokens=50, messages=marked(f"s-{sdk}"))
        assert r.content[0].text
    else:
        r = oai(smock, retries=2).chat.completions.create(model="first2", messages=marked(f"s-{sdk}"))
        assert r.choices[0].message.content
    assert time.perf_counter() - t0 >= 0.2
    s = session_of(smock, f"s-{sdk}")
    assert (s["llm_calls"], s["retries"], s["distinct_calls"], s["attempts_per_call"]) == (3, 2, 1, 3.0)
    assert s["injected_failures"]["overloaded"] == 2
    # With one retry only, the call fails with the SDK's own class.
    err = anthropic.OverloadedError if sdk == "anthropic" else openai.InternalServerError
    with pytest.raises(err):
        if sdk == "anthropic":
            ant(smock, retries=1).messages.create(model="first2", max_tokens=50, messages=marked(f"t-{sdk}"))
        else:
            oai(smock, retries=1).chat.completions.create(model="first2", messages=marked(f"t-{sdk}"))


def test_every_third_request_fails(smock):
    c = oai(smock)
    fates = []
    for i in range(6):
        try:
            c.chat.completions.create(model="every3", messages=[{"role": "user", "content": f"call {i}"}])
            fates.append("ok")
        except openai.InternalServerError:
            fates.append("500")
    assert fates == ["ok", "ok", "500", "ok", "ok", "500"]


def test_a_scripted_cut_falls_after_its_tokens_and_the_retry_streams_whole(smock):
    c = ant(smock)
    msgs = marked("cut")
    got = []
    with pytest.raises(Exception) as e:
        with c.messages.stream(model="cut20", max_tokens=100, messages=msgs) as s:
            for text in s.text_stream:
                got.append(text)
    assert not isinstance(e.value, AssertionError)
    # One token a chunk: exactly the 20 tokens before the cut arrived.
    assert len(got) == 20, got
    with c.messages.stream(model="cut20", max_tokens=100, messages=msgs) as s:
        whole = list(s.text_stream)
    assert len(whole) == 30
    assert "".join(whole).startswith("".join(got))
    assert session_of(smock, "cut")["attempts_per_call"] == 2.0
