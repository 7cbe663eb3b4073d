"""A provider that pushes back (quotas per key, generation slots and their queue), seen
through the official SDKs: their exceptions, their raw-response headers, their own retries."""

import asyncio
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
tok_ms = 0
output_tokens = 10
[models."rpm5"]
quota = { rpm = 5 }
[models."rps2"]
quota = { rpm = 120, burst_s = 0.5 }
[models."itpm"]
quota = { itpm = 60000, burst_s = 1 }
[models."slots"]
ttft_ms = 600
output_tokens = 5
capacity = { max_in_flight = 2 }
[models."tight"]
ttft_ms = 300
capacity = { max_in_flight = 1, max_queue = 1, retry_after_ms = 700 }
[models."slowing"]
ttft_ms = 100
tok_ms = 20
output_tokens = 20
capacity = { max_in_flight = 4, slowdown_at_full = 3.0 }
[models."free"]
"""
USER = [{"role": "user", "content": "hello"}]


@pytest.fixture(scope="module")
def pmock():
    m = Mock(SCENARIO)
    yield m
    m.stop()


def marked(session, text="hello"):
    return [{"role": "user", "content": f"[[plimsoll session={session} nonce=psn{0:016x} turn=1]] {text}"}]


def test_a_request_quota_lets_exactly_n_through_per_key_with_headers_on_every_reply(pmock):
    c = oai(pmock, key="sk-test-alpha-0001")
    remaining = []
    for _ in range(5):
        raw = c.chat.completions.with_raw_response.create(model="rpm5", messages=USER)
        assert raw.parse().choices[0].message.content
        assert raw.headers["x-ratelimit-limit-requests"] == "5"
        remaining.append(int(raw.headers["x-ratelimit-remaining-requests"]))
        assert raw.headers["x-ratelimit-reset-requests"].endswith("s")
    assert remaining == [4, 3, 2, 1, 0]
    with pytest.raises(openai.RateLimitError) as e:
        c.chat.completions.create(model="rpm5", messages=USER)
    assert e.value.code == "rate_limit_exceeded" and e.value.type == "requests"
    # One request comes back every 12 s: the SDK is told so.
    h = e.value.response.headers
    assert 11_000 <= int(h["retry-after-ms"]) <= 12_000, h["retry-after-ms"]
    assert h["retry-after"] in ("11", "12")
    assert h["x-ratelimit-remaining-requests"] == "0"
    assert "Limit 5" in e.value.message
    # Another key has a quota of its own, and Anthropic's client sees Anthropic's headers.
    a = ant(pmock, key="sk-test-beta-0002")
    for i in range(5):
        raw = a.messages.with_raw_response.create(model="rpm5", max_tokens=50, messages=USER)
        assert raw.headers["anthropic-ratelimit-requests-limit"] == "5"
        assert raw.headers["anthropic-ratelimit-requests-remaining"] == str(4 - i)
        assert raw.headers["anthropic-ratelimit-requests-reset"].endswith("Z")
    with pytest.raises(anthropic.RateLimitError) as e:
        a.messages.create(model="rpm5", max_tokens=50, messages=USER)
    assert e.value.body["error"]["type"] == "rate_limit_error"
    keys = get_json(pmock.base, "/plimsoll/ledger")["provider"]["keys"]
    assert keys["sk-t…0001"]["requests"] == 5 and keys["sk-t…0001"]["refused"] == 1
    assert keys["sk-t…0002"]["requests"] == 5 and keys["sk-t…0002"]["refused"] == 1


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_the_sdks_own_retry_waits_as_long_as_the_quota_says(pmock, sdk):
    key = f"retry-{sdk}"
    if sdk == "openai":
        c = oai(pmock, key=key, retries=2)
        call = lambda s: c.chat.completions.create(model="rps2", messages=marked(s))  # noqa: E731
    else:
        c = ant(pmock, key=key, retries=2)
        call = lambda s: c.messages.create(model="rps2", max_tokens=50, messages=marked(s))  # noqa: E731
    t0 = time.perf_counter()
    call(f"first-{sdk}")  # the bucket holds one request: this one empties it
    call(f"second-{sdk}")  # refused once with retry-after-ms ≈ 500, then let through
    elapsed = time.perf_counter() - t0
    # The bucket gives its next request 500 ms after the first took its own, so the two
    # take at least that however slow the first was (timed from the second alone, a busy
    # machine's slow first call shortened the wait it was told: 0.33 s, CI 2026-12-04).
    # ~1 s on a quiet machine. The counts below are the exact check (refused once, retried
    # once); the ceiling catches a retry-after of the quota's whole window (the SDK would
    # wait up to a minute), not a busy machine's few hundred ms.
    assert 0.45 <= elapsed <= 3.5, elapsed
    s = get_json(pmock.base, "/plimsoll/ledger")["sessions"][f"second-{sdk}"]
    assert (s["llm_calls"], s["refused"], s["retries"]) == (2, 1, 1), s


def test_a_token_quota_refuses_with_the_tokens_type(pmock):
    c = oai(pmock, key="tokens")
    big = [{"role": "user", "content": "word " * 400}]
    with pytest.raises(openai.RateLimitError) as e:
        for _ in range(4):
            c.chat.completions.create(model="itpm", messages=big)
    assert e.value.type == "tokens"
    assert "Rate limit reached for itpm on input tokens per minute: Limit 60,000" in e.value.message
    # The bucket holds a second of the quota (1,000 tokens): two of these passed.
    keys = get_json(pmock.base, "/plimsoll/ledger")["provider"]["keys"]
    assert keys["tokens"]["requests"] == 2 and keys["tokens"]["refused"] == 1, keys
    # Larger than the one-second bucket but within the minute's quota: it passes on a
    # full bucket and leaves it in debt; the next waits until the debt is paid.
    big = [{"role": "user", "content": "word " * 2000}]
    b = oai(pmock, key="tokens-big")
    b.chat.completions.create(model="itpm", messages=big)
    with pytest.raises(openai.RateLimitError) as e:
        b.chat.completions.create(model="itpm", messages=USER)
    # The debt (~1,000 tokens) takes a second to refill, less what refilled while the
    # client sent its next request (a few ms; hundreds on a loaded machine). Never more
    # (exact); a debt forgotten would let the call through or ask for ~0.
    assert 500 <= int(e.value.response.headers["retry-after-ms"]) <= 1100
    # More than the whole minute's quota can never pass.
    huge = [{"role": "user", "content": "word " * 70000}]
    with pytest.raises(openai.RateLimitError) as e:
        b.chat.completions.create(model="itpm", messages=huge)
    assert "Request too large" in e.value.message


def test_slots_queue_and_the_wait_counts_in_time_to_first_token(pmock):
    async def one(c):
        t0 = time.perf_counter()
        stream = await c.chat.completions.create(model="slots", messages=USER, stream=True)
        first = None
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - t0
        return first * 1000

    async def main():
        c = openai.AsyncOpenAI(base_url=pmock.base + "/v1", api_key="q", max_retries=0)
        await one(c)  # warm: the connection pool and the mock's first pages
        return sorted(await asyncio.gather(*(one(c) for _ in range(6))))

    ttft = asyncio.run(main())
    # Two slots, a reply holds one for 600 ms: waves at 600, 1200 and 1800 ms. The claim
    # is the waves: the Python client adds 10-30 ms of its own to six concurrent streams
    # on a quiet machine, and a loaded one can add a delay common to all of them, so the
    # first is held to a floor and a loose ceiling, the others to their distance from it
    # (no slots: all six at 600, gaps 0; one slot: waves six deep).
    wants = [600, 600, 1200, 1200, 1800, 1800]
    assert wants[0] * 0.9 <= ttft[0] <= wants[0] + 400, ttft
    for got, want in zip(ttft[1:], wants[1:]):
        assert abs((got - ttft[0]) - (want - wants[0])) <= want * 0.10, (ttft, want)
    # The last wave waited two holds (1,200 ms), less the spread of the client's starts;
    # one hold's wait (600) or none is a queue that was not there, one slot's (3,000) a
    # queue too deep.
    w = get_json(pmock.base, "/plimsoll/ledger")["provider"]["queue_wait_ms"]
    assert 900 <= w["max"] <= 1800, w


def test_a_full_queue_answers_overloaded_with_retry_after(pmock):
    async def main():
        c = anthropic.AsyncAnthropic(base_url=pmock.base, api_key="o", max_retries=0)
        calls = [c.messages.create(model="tight", max_tokens=20, messages=USER) for _ in range(3)]
        return await asyncio.gather(*calls, return_exceptions=True)

    out = asyncio.run(main())
    errors = [x for x in out if isinstance(x, Exception)]
    assert len(errors) == 1, out
    e = errors[0]
    assert isinstance(e, anthropic.OverloadedError) and e.status_code == 529
    assert e.body["error"]["type"] == "overloaded_error"
    assert e.response.headers["retry-after-ms"] == "700"
    with pytest.raises(openai.InternalServerError):

        async def openai_side():
            c = openai.AsyncOpenAI(base_url=pmock.base + "/v1", api_key="o", max_retries=0)
            calls = [c.chat.completions.create(model="tight", messages=USER) for _ in range(3)]
            for r in await asyncio.gather(*calls, return_exceptions=True):
                if isinstance(r, Exception):
                    assert r.status_code == 503
                    raise r

        asyncio.run(openai_side())
    refused = get_json(pmock.base, "/plimsoll/ledger")["provider"]["refused"]
    assert refused["overloaded"] == 2


def test_generation_slows_with_occupancy(pmock):
    async def one(c):
        t0 = time.perf_counter()
        await c.chat.completions.create(model="slowing", messages=USER)
        return (time.perf_counter() - t0) * 1000

    async def main():
        c = openai.AsyncOpenAI(base_url=pmock.base + "/v1", api_key="s", max_retries=0)
        await one(c)
        return sorted(await asyncio.gather(*(one(c) for _ in range(4))))

    took = asyncio.run(main())
    # 100 ms to the first token, 19 more at 20 ms × 1, 1.67, 2.33, 3 (1 to 4 slots busy).
    # The claim is the spacing: each reply 253 ms behind the one before. The client's
    # start of four concurrent calls can add a delay common to all of them (a loaded CI
    # machine once added 268 ms to every one, spacing intact), so the first reply is held
    # to a floor and a loose ceiling, the others to their distance from it.
    wants = [100 + 380 * f for f in [1.0, 5 / 3, 7 / 3, 3.0]]
    assert wants[0] * 0.9 <= took[0] <= wants[0] + 400, (took, wants)
    for got, want in zip(took[1:], wants[1:]):
        gap, want_gap = got - took[0], want - wants[0]
        assert abs(gap - want_gap) <= want * 0.10, (took, wants)


def test_limits_change_live_through_the_admin_endpoint(pmock):
    c = oai(pmock, key="live")
    c.chat.completions.create(model="free", messages=USER)
    post_json(pmock.base, "/plimsoll/admin/limits", {"model": "*", "quota": {"rpm": 1}})
    try:
        c.chat.completions.create(model="free", messages=USER)
        with pytest.raises(openai.RateLimitError):
            c.chat.completions.create(model="free", messages=USER)
        got = get_json(pmock.base, "/plimsoll/admin/limits")
        assert got["overrides"]["*"]["quota"]["rpm"] == 1
    finally:
        post_json(pmock.base, "/plimsoll/admin/limits", {"model": "*", "reset": True})
    c.chat.completions.create(model="free", messages=USER)
    with pytest.raises(Exception) as e:
        post_json(pmock.base, "/plimsoll/admin/limits", {"capacity": {"max_in_flight": 0}})
    assert "400" in str(e.value)
    text = __import__("urllib.request").request.urlopen(pmock.base + "/metrics").read().decode()
    assert 'plimsoll_mock_refused_total{reason="quota_requests"}' in text
