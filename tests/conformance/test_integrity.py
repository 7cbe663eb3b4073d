"""The integrity oracle, against a small agent that corrupts its conversation on purpose.

The agent is a plain tool loop over the official `openai` SDK with an in-memory store,
playing scenarios/memory.toml: each turn the model stores `{nonce}:{turn}` and reads it
back. Each corruption mode must be caught with the right kind, for that session only;
a correct agent must produce no violation, also with many sessions at once.
"""

import asyncio
import json
import pathlib
import secrets

import openai
import pytest

from conftest import ROOT, Mock, get_json

TOOLS = [
    {"type": "function", "function": {"name": "memory_set", "parameters": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "memory_get", "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}},
]


@pytest.fixture(scope="module")
def imock():
    text = (ROOT / "scenarios" / "memory.toml").read_text()
    m = Mock(text.replace("ttft_ms = 150", "ttft_ms = 2").replace("tok_ms = 4", "tok_ms = 0"))
    yield m
    m.stop()


def marker(session, nonce, turn):
    return f"[[plimsoll session={session} nonce={nonce} turn={turn}]]"


class Agent:
    """A minimal agent session. `corrupt` names the one thing it does wrong."""

    def __init__(self, session, corrupt=None, other_nonce=None):
        self.session = session
        self.nonce = "psn" + secrets.token_hex(8)
        self.corrupt = corrupt
        self.other_nonce = other_nonce
        self.store = {}
        self.messages = []

    def tool(self, name, args):
        if name == "memory_set":
            self.store[args["key"]] = args["value"]
            return "ok"
        value = self.store.get(args["key"], "")
        if self.corrupt == "echo":
            return value[:-1] + "X"  # a silently mangled read
        if self.corrupt == "leak":
            return self.other_nonce + ":1"  # another session's data
        return value

    def user(self, turn):
        if self.corrupt == "turn_gap" and turn == 2:
            turn = 3
        return {"role": "user", "content": f"{marker(self.session, self.nonce, turn)} remember fact {turn}"}

    def step(self, create, turn):
        self.messages.append(self.user(turn))
        if self.corrupt == "duplicate" and turn == 2:
            self.messages.append(self.messages[-1])
        for _ in range(10):
            r = create(model="memory", messages=self.outgoing(), tools=TOOLS)
            msg = r.choices[0].message
            if msg.tool_calls:
                call = msg.tool_calls[0]
                args = json.loads(call.function.arguments)
                if self.corrupt == "alter" and call.function.name == "memory_set":
                    call.function.arguments = json.dumps({**args, "value": "changed"})
                self.messages.append({"role": "assistant", "content": None, "tool_calls": [call.model_dump()]})
                self.messages.append({"role": "tool", "tool_call_id": call.id, "content": self.tool(call.function.name, args)})
            else:
                self.messages.append({"role": "assistant", "content": msg.content})
                return

    def outgoing(self):
        msgs = list(self.messages)
        if self.corrupt == "drop" and len(msgs) > 3:
            del msgs[1]  # the first assistant tool call vanishes; its result stays
        if self.corrupt == "reorder" and len(msgs) >= 8:
            msgs[3], msgs[7] = msgs[7], msgs[3]
        return msgs


def violations_of(m, session):
    return [v for v in get_json(m.base, "/plimsoll/ledger")["violations"] if v["session"] == session]


def run_agent(m, agent, turns=3):
    client = openai.OpenAI(base_url=m.base + "/v1", api_key="x", max_retries=0)
    for t in range(1, turns + 1):
        agent.step(client.chat.completions.create, t)


def test_a_correct_agent_has_no_violations(imock):
    a = Agent("clean")
    run_agent(imock, a)
    assert violations_of(imock, "clean") == []
    assert get_json(imock.base, "/plimsoll/ledger")["sessions"]["clean"]["llm_calls"] == 9


@pytest.mark.parametrize(
    "mode,kind,detail",
    [
        ("echo", "echo", "should contain"),
        ("leak", "isolation", "of another session"),
        ("drop", "history", "not in the conversation"),
        ("duplicate", "history", "appears twice"),
        ("turn_gap", "history", "missing before turn 3"),
        ("alter", "history", "differ from what the mock sent"),
        ("reorder", "history", ""),
    ],
)
def test_each_corruption_is_caught(imock, mode, kind, detail):
    other = Agent(f"victim-{mode}")
    run_agent(imock, other, turns=1)
    a = Agent(f"bad-{mode}", corrupt=mode, other_nonce=other.nonce)
    run_agent(imock, a)
    found = violations_of(imock, f"bad-{mode}")
    assert found, f"{mode}: nothing found"
    # A leaked value is also a wrong read-back, and a moved tool result is read in the
    # wrong step, so these two may add echo findings.
    allowed = {kind, "echo"} if mode in ("leak", "reorder") else {kind}
    assert {v["kind"] for v in found} <= allowed, found
    assert any(v["kind"] == kind and detail in v["detail"] for v in found), found
    assert all(v["excerpt"] for v in found)
    if mode == "turn_gap":
        # The turn named is the marked turn the history was missing before.
        assert {v["turn"] for v in found if v["kind"] == "history"} == {3}, found
    assert violations_of(imock, f"victim-{mode}") == []


def test_leaked_message_from_another_session(imock):
    victim = Agent("victim-msg")
    run_agent(imock, victim, turns=1)
    a = Agent("thief")
    client = openai.OpenAI(base_url=imock.base + "/v1", api_key="x", max_retries=0)
    a.messages.append(a.user(1))
    a.messages.append(victim.messages[0])  # a user message of the other session
    client.chat.completions.create(model="memory", messages=a.messages, tools=TOOLS)
    found = violations_of(imock, "thief")
    assert any(v["kind"] == "isolation" and "victim-msg" in v["detail"] for v in found), found


async def test_no_false_positives_with_many_concurrent_sessions(imock):
    client = openai.AsyncOpenAI(base_url=imock.base + "/v1", api_key="x", max_retries=0)
    agents = [Agent(f"crowd-{i}") for i in range(150)]

    async def run(a):
        for t in range(1, 4):
            a.messages.append(a.user(t))
            for _ in range(10):
                r = await client.chat.completions.create(model="memory", messages=a.messages, tools=TOOLS)
                msg = r.choices[0].message
                if not msg.tool_calls:
                    a.messages.append({"role": "assistant", "content": msg.content})
                    break
                call = msg.tool_calls[0]
                a.messages.append({"role": "assistant", "content": None, "tool_calls": [call.model_dump()]})
                a.messages.append({"role": "tool", "tool_call_id": call.id, "content": a.tool(call.function.name, json.loads(call.function.arguments))})

    await asyncio.gather(*(run(a) for a in agents))
    ledger = get_json(imock.base, "/plimsoll/ledger")
    crowd = [v for v in ledger["violations"] if v["session"].startswith("crowd-")]
    assert crowd == []
    assert sum(ledger["sessions"][a.session]["llm_calls"] for a in agents) == 150 * 9
