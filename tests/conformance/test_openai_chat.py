"""OpenAI Chat Completions through the official `openai` SDK."""

import json
import time

import openai
import pytest

from conftest import BIN, tokens  # noqa: F401  (BIN documents where the binary comes from)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "look a key up",
            "parameters": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["key"],
            },
        },
    }
]
USER = [{"role": "user", "content": "hello"}]


def test_plain_completion_has_every_field(oai):
    r = oai.chat.completions.create(model="fast", messages=USER)
    assert r.id.startswith("chatcmpl-")
    assert r.object == "chat.completion"
    assert r.model == "fast"
    assert r.created > 1_700_000_000
    choice = r.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert tokens(choice.message.content) == 12
    assert r.usage.completion_tokens == 12
    assert r.usage.prompt_tokens > 0
    assert r.usage.total_tokens == r.usage.prompt_tokens + 12


def test_max_tokens_stops_with_length(oai):
    r = oai.chat.completions.create(model="fast", messages=USER, max_completion_tokens=3)
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 3


def test_stream_with_usage_assembles_the_same_text(oai):
    plain = oai.chat.completions.create(model="fast", messages=USER)
    chunks = list(
        oai.chat.completions.create(
            model="fast", messages=USER, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content  # same seed, same request
    assert chunks[0].choices[0].delta.role == "assistant"
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 12
    assert all(c.usage is None for c in chunks[:-1])


def test_stream_helper_final_completion(oai):
    with oai.chat.completions.stream(model="chunky", messages=USER) as stream:
        # The first chunk carries the role and an empty content, as OpenAI sends it.
        deltas = [e.delta for e in stream if e.type == "content.delta" and e.delta]
        final = stream.get_final_completion()
    # 30 tokens at 4 per chunk: 8 delta events.
    assert len(deltas) == 8
    assert final.choices[0].message.content == "".join(deltas)
    assert tokens(final.choices[0].message.content) == 30


def test_tool_call_round_trip_plain_and_streamed(oai):
    r = oai.chat.completions.create(model="fast", messages=USER, tools=TOOLS)
    call = r.choices[0].message.tool_calls[0]
    assert r.choices[0].finish_reason == "tool_calls"
    assert call.type == "function" and call.function.name == "lookup"
    args = json.loads(call.function.arguments)
    assert isinstance(args["key"], str) and isinstance(args["limit"], int)

    with oai.chat.completions.stream(model="fast", messages=USER, tools=TOOLS) as stream:
        arg_deltas = [e for e in stream if e.type == "tool_calls.function.arguments.delta"]
        final = stream.get_final_completion()
    streamed = final.choices[0].message.tool_calls[0]
    assert len(arg_deltas) > 3, "arguments must arrive as several deltas"
    assert json.loads(streamed.function.arguments) == args
    assert streamed.id == call.id

    follow = USER + [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "value-42"},
    ]
    r2 = oai.chat.completions.create(model="fast", messages=follow, tools=TOOLS)
    assert r2.choices[0].finish_reason == "stop"
    assert r2.choices[0].message.tool_calls is None
    assert r2.choices[0].message.content


def test_tool_choice_none_and_named(oai):
    r = oai.chat.completions.create(model="fast", messages=USER, tools=TOOLS, tool_choice="none")
    assert r.choices[0].message.tool_calls is None
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(
            model="fast", messages=USER, tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "nope"}},
        )
    assert e.value.body["param"] == "tool_choice"


def test_timing_follows_the_model(oai):
    t0 = time.perf_counter()
    stream = oai.chat.completions.create(model="timed", messages=USER, stream=True)
    first = None
    for c in stream:
        if c.choices and c.choices[0].delta.content:
            first = first or time.perf_counter()
    end = time.perf_counter()
    ttft_ms = (first - t0) * 1000
    total_ms = (end - t0) * 1000
    # Never sooner than the model's times (exact). The ceilings are what a mock that counts
    # the TTFT twice (400 ms) or the token time twice (~590 ms in all) crosses; a busy
    # machine's client adds tens of ms, not 190.
    assert 195 <= ttft_ms < 390, ttft_ms
    assert 390 <= total_ms < 580, total_ms  # 200 + 39 × 5


def test_bad_requests_raise_bad_request_naming_the_field(oai):
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model="fast", messages=[{"role": "user", "content": 5}])
    assert e.value.status_code == 400
    assert e.value.body["param"] == "messages.0.content"
    assert "messages.0.content" in e.value.message
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model="fast", messages=[])
    assert e.value.body["param"] == "messages"
    with pytest.raises(openai.BadRequestError) as e:
        oai.chat.completions.create(model="fast", messages=USER, n=2)
    assert e.value.body["param"] == "n"


def test_unknown_model_is_not_found(oai):
    with pytest.raises(openai.NotFoundError) as e:
        oai.chat.completions.create(model="no-such-model", messages=USER)
    assert e.value.body["code"] == "model_not_found"


def test_oversized_body_is_refused_in_the_envelope(oai):
    with pytest.raises(openai.APIStatusError) as e:
        oai.chat.completions.create(model="fast", messages=[{"role": "user", "content": "x" * (2 << 20)}])
    assert e.value.status_code == 413
    assert "limit" in e.value.message


def test_models_list(oai):
    ids = [m.id for m in oai.models.list()]
    assert "fast" in ids and "timed" in ids
    assert oai.models.retrieve("fast").id == "fast"


async def test_async_stream(aoai):
    stream = await aoai.chat.completions.create(model="fast", messages=USER, stream=True)
    text = ""
    async for c in stream:
        if c.choices:
            text += c.choices[0].delta.content or ""
    assert tokens(text) == 12
