"""`POST /v1/embeddings` through the official `openai` SDK: base64 by default, floats
when asked, batches, `dimensions`, deterministic vectors, the model's time, errors."""

import math
import time

import openai
import pytest

from conftest import Mock, get_json
from conftest import openai_client as oai

SCENARIO = """
unknown_model = "error"
[defaults]
ttft_ms = 120
tok_ms = 1
[models."text-embedding-3-small"]
[models."tiny-embed"]
embedding_dim = 8
ttft_ms = 5
"""


@pytest.fixture(scope="module")
def emock():
    m = Mock(SCENARIO)
    yield m
    m.stop()


def test_vectors_are_deterministic_unit_vectors_of_the_models_size(emock):
    c = oai(emock)
    t0 = time.perf_counter()
    r = c.embeddings.create(model="text-embedding-3-small", input=["the harbor", "the ship", "the harbor"])
    elapsed = time.perf_counter() - t0
    # The model's 120 ms, never less (exact). The ceiling leaves the first call's client
    # set-up on a busy machine (imports, a connection) its time; a wait per token or per
    # dimension runs to seconds.
    assert 0.11 <= elapsed < 1.0, elapsed
    assert [d.index for d in r.data] == [0, 1, 2]
    a, b, a2 = (d.embedding for d in r.data)
    assert len(a) == 1536
    assert a == a2 and a != b
    assert math.isclose(math.sqrt(sum(x * x for x in a)), 1.0, rel_tol=1e-4)
    assert r.usage.prompt_tokens == 6 and r.usage.total_tokens == 6
    # Floats asked explicitly: the same numbers the SDK decoded from base64.
    f = c.embeddings.create(model="text-embedding-3-small", input="the harbor", encoding_format="float")
    assert [round(x, 5) for x in f.data[0].embedding] == [round(x, 5) for x in a]


def test_dimensions_token_inputs_and_errors(emock):
    c = oai(emock)
    assert len(c.embeddings.create(model="tiny-embed", input="x").data[0].embedding) == 8
    assert len(c.embeddings.create(model="tiny-embed", input="x", dimensions=3).data[0].embedding) == 3
    r = c.embeddings.create(model="tiny-embed", input=[[1, 2, 3], [4, 5]])
    assert len(r.data) == 2 and r.usage.prompt_tokens == 5
    with pytest.raises(openai.BadRequestError) as e:
        c.embeddings.create(model="tiny-embed", input="x", dimensions=4096)
    assert "dimensions: must be at most 8" in e.value.message
    with pytest.raises(openai.NotFoundError):
        c.embeddings.create(model="nope", input="x")
    with pytest.raises(openai.BadRequestError) as e:
        c.embeddings.create(model="tiny-embed", input=[])
    assert "input" in e.value.message
    calls = get_json(emock.base, "/plimsoll/ledger")["totals"]["llm_calls"]
    assert calls >= 5
