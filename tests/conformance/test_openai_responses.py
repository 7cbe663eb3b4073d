"""OpenAI Responses through the official `openai` SDK."""

from conftest import tokens
import json

import openai
import pytest

TOOLS = [
    {
        "type": "function",
        "name": "store",
        "description": "store a value",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
            "required": ["key", "value"],
        },
    }
]


def test_plain_response(oai):
    r = oai.responses.create(model="fast", input="hello", instructions="be brief")
    assert r.id.startswith("resp_")
    assert r.status == "completed"
    assert tokens(r.output_text) == 12
    assert r.usage.output_tokens == 12
    assert r.usage.input_tokens > 0
    assert r.usage.total_tokens == r.usage.input_tokens + 12


def test_stream_events_are_typed_and_ordered(oai):
    events = list(oai.responses.create(model="fast", input="hello", stream=True))
    types = [e.type for e in events]
    assert types[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert types.count("response.output_text.delta") == 12
    assert [e.sequence_number for e in events] == list(range(len(events)))
    done = events[-1].response
    assert done.output_text == "".join(e.delta for e in events if e.type == "response.output_text.delta")


def test_stream_helper_final_response(oai):
    with oai.responses.stream(model="chunky", input="hello") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert len(deltas) == 8
    assert final.output_text == "".join(deltas)


def test_function_call_round_trip(oai):
    with oai.responses.stream(model="fast", input="remember this", tools=TOOLS) as stream:
        arg_deltas = [e for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    call = final.output[0]
    assert call.type == "function_call" and call.name == "store"
    assert len(arg_deltas) > 3
    args = json.loads(call.arguments)
    assert set(args) == {"key", "value"}

    plain = oai.responses.create(model="fast", input="remember this", tools=TOOLS)
    assert json.loads(plain.output[0].arguments) == args

    follow = [
        {"role": "user", "content": "remember this"},
        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "stored"},
    ]
    r2 = oai.responses.create(model="fast", input=follow, tools=TOOLS)
    assert r2.output[0].type == "message"
    assert r2.output_text


def test_max_output_tokens_is_incomplete(oai):
    r = oai.responses.create(model="fast", input="hello", max_output_tokens=5)
    assert r.status == "incomplete"
    assert r.incomplete_details.reason == "max_output_tokens"


def test_bad_input_names_the_field(oai):
    with pytest.raises(openai.BadRequestError) as e:
        oai.responses.create(model="fast", input=[{"role": "wizard", "content": "x"}])
    assert e.value.body["param"] == "input.0.role"


async def test_async_stream_helper(aoai):
    async with aoai.responses.stream(model="fast", input="hello") as stream:
        async for _ in stream:
            pass
        final = await stream.get_final_response()
    assert tokens(final.output_text) == 12
