"""The provider's prompt cache through the official SDKs: each parses the cached-token
fields of its API in plain and streamed replies — OpenAI Chat Completions
(`usage.prompt_tokens_details.cached_tokens`, the streamed usage chunk of
`stream_options.include_usage`), Responses (`usage.input_tokens_details.cached_tokens`,
`response.completed`), Anthropic Messages (`cache_creation_input_tokens`,
`cache_read_input_tokens` and the `cache_creation` object, in the message and in the
stream's `message_start` and `message_delta`), Gemini (`usageMetadata.cachedContentTokenCount`)
— and a request with five breakpoints gets Anthropic's own 400.

Every test sends a prompt of its own (a fresh word at its start), so the mock's cache —
shared across the session's tests, as a provider's is across requests — starts cold for it.
"""

import uuid

import anthropic
import pytest
from google import genai
from google.genai import types

from conftest import Mock, anthropic_client, openai_client

SCENARIO = """
[defaults]
ttft_ms = 5
tok_ms = 1
output_tokens = 8
reasoning = { mode = "off" }
"""

EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture(scope="module")
def cmock():
    m = Mock(SCENARIO)
    yield m
    m.stop()


def long_prompt(words=1500):
    """A prompt of its own: a fresh word, then `words` words (one token each)."""
    return f"{uuid.uuid4().hex} " + " ".join(["rule"] * words)


def test_chat_completions_reports_cached_tokens_plain_and_streamed(cmock):
    c = openai_client(cmock)
    messages = [{"role": "system", "content": long_prompt()}, {"role": "user", "content": "hi"}]
    cold = c.chat.completions.create(model="gpt-4o", messages=messages)
    assert cold.usage.prompt_tokens_details.cached_tokens == 0
    warm = c.chat.completions.create(model="gpt-4o", messages=messages)
    cached = warm.usage.prompt_tokens_details.cached_tokens
    # OpenAI caches from 1024 tokens in steps of 128, and counts the hit in prompt_tokens.
    assert cached >= 1024 and (cached - 1024) % 128 == 0 and cached <= warm.usage.prompt_tokens
    stream = c.chat.completions.create(model="gpt-4o", messages=messages, stream=True,
                                       stream_options={"include_usage": True})
    usage = [ch.usage for ch in stream if ch.usage is not None]
    assert len(usage) == 1 and usage[0].prompt_tokens_details.cached_tokens == cached
    # Another prompt_cache_key shares nothing.
    keyed = c.chat.completions.create(model="gpt-4o", messages=messages, prompt_cache_key="other")
    assert keyed.usage.prompt_tokens_details.cached_tokens == 0


def test_responses_reports_cached_tokens_plain_and_streamed(cmock):
    c = openai_client(cmock)
    instructions = long_prompt()
    cold = c.responses.create(model="gpt-4o", instructions=instructions, input="hi")
    assert cold.usage.input_tokens_details.cached_tokens == 0
    warm = c.responses.create(model="gpt-4o", instructions=instructions, input="hi")
    cached = warm.usage.input_tokens_details.cached_tokens
    assert cached >= 1024 and cached <= warm.usage.input_tokens
    with c.responses.stream(model="gpt-4o", instructions=instructions, input="hi") as s:
        for _ in s:
            pass
        final = s.get_final_response()
    assert final.usage.input_tokens_details.cached_tokens == cached


def test_messages_reports_cache_writes_and_reads_plain_and_streamed(cmock):
    c = anthropic_client(cmock)
    system = [{"type": "text", "text": long_prompt(2000), "cache_control": EPHEMERAL}]
    ask = dict(model="claude-sonnet-4-6", max_tokens=50, system=system,
               messages=[{"role": "user", "content": "hi"}])
    first = c.messages.create(**ask).usage
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 2000
    assert first.cache_creation.ephemeral_5m_input_tokens == first.cache_creation_input_tokens
    assert first.cache_creation.ephemeral_1h_input_tokens == 0
    second = c.messages.create(**ask).usage
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    # input_tokens are those after the last breakpoint: the same on both calls.
    assert second.input_tokens == first.input_tokens
    starts, deltas = [], []
    with c.messages.stream(**ask) as s:
        for ev in s:
            if ev.type == "message_start":
                starts.append(ev.message.usage)
            elif ev.type == "message_delta":
                deltas.append(ev.usage)
        final = s.get_final_message().usage
    assert starts[0].cache_read_input_tokens == second.cache_read_input_tokens
    assert starts[0].cache_creation.ephemeral_5m_input_tokens == 0
    assert deltas[-1].cache_read_input_tokens == second.cache_read_input_tokens
    assert deltas[-1].cache_creation_input_tokens == 0
    assert final.cache_read_input_tokens == second.cache_read_input_tokens


def test_a_one_hour_breakpoint_is_written_for_an_hour(cmock):
    c = anthropic_client(cmock)
    system = [{"type": "text", "text": long_prompt(2000), "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    u = c.messages.create(model="claude-sonnet-4-6", max_tokens=20, system=system,
                          messages=[{"role": "user", "content": [{"type": "text", "text": "hello you", "cache_control": EPHEMERAL}]}]).usage
    assert u.cache_creation.ephemeral_1h_input_tokens > 2000
    assert u.cache_creation.ephemeral_5m_input_tokens == 6  # the user message: 4 + 2 tokens
    assert u.input_tokens == 0


def test_five_breakpoints_get_anthropics_own_400(cmock):
    c = anthropic_client(cmock)
    block = {"type": "text", "text": "x", "cache_control": EPHEMERAL}
    with pytest.raises(anthropic.BadRequestError) as e:
        c.messages.create(model="claude-sonnet-4-6", max_tokens=20, cache_control=EPHEMERAL,
                          system=[block, block, block, block], messages=[{"role": "user", "content": "hi"}])
    assert e.value.status_code == 400
    assert e.value.body["error"] == {
        "type": "invalid_request_error",
        "message": "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    }


def test_gemini_reports_implicit_cache_hits_plain_and_streamed(cmock):
    c = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=cmock.base))
    cfg = types.GenerateContentConfig(system_instruction=long_prompt(2500))
    r1 = c.models.generate_content(model="gemini-2.5-flash", contents="hi", config=cfg)
    assert not r1.usage_metadata.cached_content_token_count
    r2 = c.models.generate_content(model="gemini-2.5-flash", contents="hi", config=cfg)
    cached = r2.usage_metadata.cached_content_token_count
    assert cached >= 2048 and cached <= r2.usage_metadata.prompt_token_count
    assert r2.usage_metadata.cache_tokens_details[0].token_count == cached
    chunks = list(c.models.generate_content_stream(model="gemini-2.5-flash", contents="hi", config=cfg))
    assert chunks[-1].usage_metadata.cached_content_token_count == cached
