"""Anthropic Messages through the official `anthropic` SDK."""

from conftest import tokens
import time

import anthropic
import pytest

TOOLS = [
    {
        "name": "get_weather",
        "description": "weather for a city",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["c", "f"]}},
            "required": ["city"],
        },
    }
]
USER = [{"role": "user", "content": "hello"}]
MODEL = "claude-plimsoll-1"


def test_plain_message(ant):
    m = ant.messages.create(model=MODEL, max_tokens=100, messages=USER, system="be brief")
    assert m.id.startswith("msg_")
    assert m.type == "message" and m.role == "assistant" and m.model == MODEL
    assert m.stop_reason == "end_turn"
    assert m.content[0].type == "text"
    assert tokens(m.content[0].text) == 12
    assert m.usage.output_tokens == 12 and m.usage.input_tokens > 0


def test_max_tokens_stop_reason(ant):
    m = ant.messages.create(model=MODEL, max_tokens=4, messages=USER)
    assert m.stop_reason == "max_tokens" and m.usage.output_tokens == 4


def test_raw_stream_event_order(ant):
    events = list(ant.messages.create(model=MODEL, max_tokens=100, messages=USER, stream=True))
    types = [e.type for e in events]
    assert types[:3] == ["message_start", "content_block_start", "content_block_delta"] or types[:3] == [
        "message_start",
        "ping",
        "content_block_start",
    ]
    assert types[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert types.count("content_block_delta") == 12
    assert events[-2].delta.stop_reason == "end_turn"
    assert events[-2].usage.output_tokens == 12


def test_stream_helper_final_message_and_text_stream(ant):
    plain = ant.messages.create(model=MODEL, max_tokens=100, messages=USER)
    with ant.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == plain.content[0].text
    assert final.content[0].text == text
    assert final.usage.output_tokens == 12


def test_tool_use_round_trip_streamed(ant):
    with ant.messages.stream(model=MODEL, max_tokens=500, messages=USER, tools=TOOLS) as stream:
        json_deltas = [e for e in stream if e.type == "input_json"]
        final = stream.get_final_message()
    block = final.content[0]
    assert final.stop_reason == "tool_use"
    assert block.type == "tool_use" and block.name == "get_weather" and block.id.startswith("toolu_")
    assert len(json_deltas) > 3
    assert isinstance(block.input["city"], str) and block.input["unit"] == "c"

    plain = ant.messages.create(model=MODEL, max_tokens=500, messages=USER, tools=TOOLS)
    assert plain.content[0].input == block.input

    follow = USER + [
        {"role": "assistant", "content": [b.model_dump() for b in final.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block.id, "content": "sunny"}]},
    ]
    m2 = ant.messages.create(model=MODEL, max_tokens=500, messages=follow, tools=TOOLS)
    assert m2.stop_reason == "end_turn" and m2.content[0].type == "text"


def test_tool_choice_any_forces_a_call_after_results(ant):
    msgs = USER + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]},
    ]
    m = ant.messages.create(model=MODEL, max_tokens=100, messages=msgs, tools=TOOLS, tool_choice={"type": "any"})
    assert m.stop_reason == "tool_use"
    m = ant.messages.create(model=MODEL, max_tokens=100, messages=msgs, tools=TOOLS, tool_choice={"type": "none"})
    assert m.stop_reason == "end_turn"


def test_timing(ant):
    t0 = time.perf_counter()
    with ant.messages.stream(model="timed", max_tokens=1000, messages=USER) as stream:
        first = None
        for _ in stream.text_stream:
            first = first or time.perf_counter()
    total_ms = (time.perf_counter() - t0) * 1000
    # Never sooner than the model's 200 ms and 200 + 39 × 5 ms (exact). The ceilings are
    # what a mock that counts the TTFT twice (400 ms to the first token) or the token time
    # twice (~590 ms in all) crosses; a busy machine's client adds tens of ms, not 190.
    assert 195 <= (first - t0) * 1000 < 390
    assert 390 <= total_ms < 580


def test_errors_raise_the_sdk_classes(ant):
    with pytest.raises(anthropic.BadRequestError) as e:
        ant.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "robot", "content": "x"}])
    assert e.value.status_code == 400
    assert e.value.body["type"] == "error"
    assert e.value.body["error"]["type"] == "invalid_request_error"
    assert "messages.0.role" in e.value.body["error"]["message"]
    with pytest.raises(anthropic.NotFoundError) as e:
        ant.messages.create(model="claude-nope", max_tokens=10, messages=USER)
    assert e.value.body["error"]["type"] == "not_found_error"
    with pytest.raises(anthropic.APIStatusError) as e:
        ant.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "x" * (2 << 20)}])
    assert e.value.status_code == 413
    assert e.value.body["error"]["type"] == "request_too_large"


def test_models_list(ant):
    ids = [m.id for m in ant.models.list()]
    assert MODEL in ids


async def test_async_stream(aant):
    async with aant.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        final = await stream.get_final_message()
    assert final.usage.output_tokens == 12
