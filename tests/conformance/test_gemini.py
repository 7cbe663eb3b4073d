"""The Gemini API through the official `google-genai` SDK: plain and streamed replies,
function calls and responses, usage, errors in Google's envelope, the SDK's retries,
and thought signatures checked when they come back."""

import pytest
from google import genai
from google.genai import errors, types

from conftest import Mock, get_json, tokens

SCENARIO = """
unknown_model = "error"
[defaults]
ttft_ms = 5
tok_ms = 1
output_tokens = 12
[models."gemini-think"]
reasoning = { tokens = 16 }
[models."gemini-plain"]
reasoning = { mode = "off" }
[models."gemini-memory"]
reasoning = { mode = "off" }
[[models."gemini-memory".script]]
call = "memory_set"
args = { key = "k{{turn}}", value = "{{nonce}}" }
[[models."gemini-memory".script]]
call = "memory_get"
args = { key = "k{{turn}}" }
expect = "{{nonce}}"
[[models."gemini-memory".script]]
say = "recalled {{result.1}}"
[models."gemini-flaky"]
reasoning = { mode = "off" }
[[models."gemini-flaky".fail]]
attempts = 2
with = "rate_limit"
"""

TOOL = types.Tool(function_declarations=[types.FunctionDeclaration(
    name="lookup", description="look a key up",
    parameters=types.Schema(type="OBJECT", properties={"key": types.Schema(type="STRING")}, required=["key"]))])


@pytest.fixture(scope="module")
def gmock():
    m = Mock(SCENARIO)
    yield m
    m.stop()


def client(m, **http):
    return genai.Client(api_key="k", http_options=types.HttpOptions(base_url=m.base, **http))


def user(session, text="look it up"):
    return types.Content(role="user", parts=[types.Part(text=f"[[plimsoll session={session} nonce=psn{0:016x} turn=1]] {text}")])


def ledger(m):
    return get_json(m.base, "/plimsoll/ledger")


def violations_of(m, session):
    return [v for v in ledger(m)["violations"] if v["session"] == session]


def test_plain_and_streamed_text_with_usage(gmock):
    c = client(gmock)
    r = c.models.generate_content(model="gemini-plain", contents=[user("g-plain", "hi")])
    assert tokens(r.text) == 12
    assert r.candidates[0].finish_reason == types.FinishReason.STOP
    u = r.usage_metadata
    assert u.candidates_token_count == 12 and u.prompt_token_count > 0
    assert u.total_token_count == u.prompt_token_count + 12
    chunks = list(c.models.generate_content_stream(model="gemini-plain", contents=[user("g-stream", "hi")]))
    assert len(chunks) == 12
    assert "".join(ch.text for ch in chunks).split() == r.text.split() or tokens("".join(ch.text for ch in chunks)) == 12
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP
    assert chunks[-1].usage_metadata.candidates_token_count == 12


def tool_round(c, session, model="gemini-think", stream=False, **cfg):
    config = types.GenerateContentConfig(tools=[TOOL], **cfg)
    if stream:
        chunks = list(c.models.generate_content_stream(model=model, contents=[user(session)], config=config))
        parts = [p for ch in chunks for p in ch.candidates[0].content.parts]
        return types.Content(role="model", parts=parts), chunks[-1]
    r = c.models.generate_content(model=model, contents=[user(session)], config=config)
    return r.candidates[0].content, r


def answer(c, session, content, model="gemini-think"):
    call = next(p.function_call for p in content.parts if p.function_call)
    back = [user(session), content,
            types.Content(role="user", parts=[types.Part.from_function_response(name=call.name, response={"result": "42"})])]
    return c.models.generate_content(model=model, contents=back, config=types.GenerateContentConfig(tools=[TOOL]))


@pytest.mark.parametrize("stream", [False, True])
def test_function_call_round_trip_with_its_thought_signature(gmock, stream):
    c = client(gmock)
    session = f"g-loop-{stream}"
    content, last = tool_round(c, session, stream=stream)
    calls = [p for p in content.parts if p.function_call]
    assert len(calls) == 1 and calls[0].function_call.name == "lookup"
    assert isinstance(calls[0].function_call.args["key"], str)
    assert calls[0].thought_signature, "the signature rides on the first function call"
    assert last.usage_metadata.thoughts_token_count == 16
    final = answer(c, session, content)
    assert final.text and not final.function_calls
    assert violations_of(gmock, session) == []


def test_a_dropped_or_corrupted_signature_gets_the_apis_400(gmock):
    c = client(gmock)
    content, _ = tool_round(c, "g-drop")
    stripped = types.Content(role="model", parts=[
        types.Part(function_call=p.function_call) for p in content.parts if p.function_call])
    with pytest.raises(errors.ClientError) as e:
        answer(c, "g-drop", stripped)
    assert e.value.code == 400 and e.value.status == "INVALID_ARGUMENT"
    assert ("Function call is missing a thought_signature in functionCall parts. This is required for tools to "
            "work correctly") in e.value.message
    assert "function call `default_api:lookup` , position 2." in e.value.message
    [v] = violations_of(gmock, "g-drop")
    assert v["kind"] == "reasoning" and v["detail"].startswith("thought signature of tool call")
    corrupt = content.model_copy(deep=True)
    sig = corrupt.parts[0].thought_signature
    corrupt.parts[0].thought_signature = bytes([sig[0] ^ 1]) + sig[1:]
    with pytest.raises(errors.ClientError) as e:
        answer(c, "g-drop", corrupt)
    assert e.value.message == "Corrupted thought signature."


def test_thoughts_are_shown_when_asked_and_off_with_a_zero_budget(gmock):
    c = client(gmock)
    shown = c.models.generate_content(
        model="gemini-think", contents=[user("g-thoughts", "hi")],
        config=types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True)))
    kinds = [bool(p.thought) for p in shown.candidates[0].content.parts]
    assert kinds == [True, False]
    assert tokens(shown.candidates[0].content.parts[0].text) == 16
    off = c.models.generate_content(
        model="gemini-think", contents=[user("g-nothink", "hi")],
        config=types.GenerateContentConfig(thinking_config=types.ThinkingConfig(thinking_budget=0)))
    assert not off.usage_metadata.thoughts_token_count


def test_errors_come_in_googles_envelope_and_the_sdk_retries(gmock):
    c = client(gmock)  # kept: a Client closes its connections when collected
    with pytest.raises(errors.ClientError) as e:
        c.models.generate_content(model="gemini-nope", contents="hi")
    assert e.value.code == 404 and e.value.status == "NOT_FOUND"
    # The first 2 attempts of each call get 429 RESOURCE_EXHAUSTED; the SDK retries.
    retrying = client(gmock, retry_options=types.HttpRetryOptions(attempts=3, initial_delay=0.05, jitter=0))
    r = retrying.models.generate_content(model="gemini-flaky", contents=[user("g-retry", "hi")])
    assert r.text
    s = ledger(gmock)["sessions"]["g-retry"]
    assert s["llm_calls"] == 3 and s["attempts_per_call"] == 3.0
    with pytest.raises(errors.ClientError) as e:
        c.models.generate_content(model="gemini-flaky", contents=[user("g-noretry", "hi")])
    assert e.value.code == 429 and e.value.status == "RESOURCE_EXHAUSTED"


MEMORY = types.Tool(function_declarations=[
    types.FunctionDeclaration(name="memory_set", parameters=types.Schema(type="OBJECT", properties={
        "key": types.Schema(type="STRING"), "value": types.Schema(type="STRING")})),
    types.FunctionDeclaration(name="memory_get", parameters=types.Schema(type="OBJECT", properties={
        "key": types.Schema(type="STRING")}))])


@pytest.mark.parametrize("faithful", [True, False])
def test_the_oracle_reads_gemini_conversations(gmock, faithful):
    """A memory agent over Gemini: what memory_set stored must come back from
    memory_get; a wrong value is an echo violation, as on the other APIs."""
    c = client(gmock)
    session = f"g-memory-{faithful}"
    store = {}
    contents = [types.Content(role="user", parts=[types.Part(
        text=f"[[plimsoll session={session} nonce=psn{7:016x} turn=1]] remember")])]
    config = types.GenerateContentConfig(tools=[MEMORY])
    for _ in range(4):
        r = c.models.generate_content(model="gemini-memory", contents=contents, config=config)
        contents.append(r.candidates[0].content)
        if not r.function_calls:
            break
        fc = r.function_calls[0]
        if fc.name == "memory_set":
            store[fc.args["key"]] = fc.args["value"]
            result = "stored"
        else:
            result = store.get(fc.args["key"], "") if faithful else "something else"
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=fc.name, response={"result": result})]))
    assert r.text.startswith("recalled ")
    found = violations_of(gmock, session)
    if faithful:
        assert found == []
    else:
        assert [v["kind"] for v in found] == ["echo"], found
        assert "memory_get" in found[0]["detail"]
