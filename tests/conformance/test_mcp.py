"""The mock's MCP tools through the official Python MCP SDK (`mcp`): initialise, list and
call every declared tool over Streamable HTTP (JSON and SSE replies) and over stdio
(`plimsoll mcp --stdio`, in its own process or relaying to the mock), in both eras of the
protocol (the SDK's default `auto` probes `server/discover` and speaks 2026-07-28;
`legacy` sends `initialize`), and see injected failures as the SDK's own types: a
JSON-RPC error raises `MCPError`, a tool error is a result with `is_error`."""

import json
import pathlib
import tempfile

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from conftest import BIN, Mock, get_json

TOOLS = """
[[mcp.tools]]
name = "search"
description = "Answers with its arguments"
input_schema = { type = "object", properties = { query = { type = "string" } }, required = ["query"] }
[[mcp.tools]]
name = "fetch"
result = "payload"
payload_bytes = 3000
[[mcp.tools]]
name = "kv_put"
result = "kv_put"
[[mcp.tools]]
name = "kv_get"
result = "kv_get"
[[mcp.tools]]
name = "motto"
result = "text"
text = "Plimsoll finds the line."
[[mcp.tools]]
name = "slow"
latency_ms = 150
[[mcp.tools]]
name = "broken"
failures = { rpc_error = 1.0 }
[[mcp.tools]]
name = "grumpy"
failures = { tool_error = 1.0 }
[[mcp.tools]]
name = "warming"
[[mcp.tools.fail]]
first = 1
with = "tool_error"
"""
DECLARED = ["search", "fetch", "kv_put", "kv_get", "motto", "slow", "broken", "grumpy", "warming"]


@pytest.fixture(scope="module")
def json_mock():
    m = Mock("[mcp]\nreply = \"json\"\n" + TOOLS)
    yield m
    m.stop()


@pytest.fixture(scope="module")
def sse_mock():
    m = Mock("[mcp]\nreply = \"sse\"\n" + TOOLS)
    yield m
    m.stop()


@pytest.fixture(scope="module")
def scenario_file():
    d = tempfile.TemporaryDirectory()
    p = pathlib.Path(d.name) / "tools.toml"
    p.write_text("[mcp]\n" + TOOLS)
    yield str(p)
    d.cleanup()


def warmed(base):
    """Whether the mock at `base` has served the `warming` tool before."""
    tools = get_json(base, "/plimsoll/ledger").get("mcp", {}).get("tools", {})
    return "warming" in tools


def stdio(*args):
    return StdioServerParameters(command=BIN, args=["mcp", "--stdio", *args])


async def exercise(client, expected_version, fresh=False):
    """Every declared tool called once; what each answers, or how it fails."""
    assert client.protocol_version == expected_version
    assert client.server_info.name == "plimsoll-mcp"
    listed = await client.list_tools()
    assert [t.name for t in listed.tools] == DECLARED
    by_name = {t.name: t for t in listed.tools}
    assert by_name["kv_put"].input_schema["required"] == ["key", "value"]
    r = await client.call_tool("search", {"query": "load lines"})
    assert (r.is_error, json.loads(r.content[0].text)) == (False, {"query": "load lines"})
    r = await client.call_tool("fetch", {"id": "doc-1"})
    assert len(r.content[0].text) == 3000
    assert (await client.call_tool("kv_put", {"key": "k", "value": "v-42"})).content[0].text == "stored k"
    assert (await client.call_tool("kv_get", {"key": "k"})).content[0].text == "v-42"
    assert (await client.call_tool("motto", {})).content[0].text == "Plimsoll finds the line."
    assert not (await client.call_tool("slow", {"n": 1})).is_error
    with pytest.raises(MCPError) as e:
        await client.call_tool("broken", {})
    assert e.value.error.code == -32603 and "rpc_error injected" in e.value.error.message
    r = await client.call_tool("grumpy", {})
    assert r.is_error and "tool_error injected" in r.content[0].text
    r = await client.call_tool("warming", {})
    assert r.is_error == fresh, "the server's first call of the tool fails, the next ones not"
    assert not (await client.call_tool("warming", {"again": True})).is_error
    missing = await client.call_tool("search", {})
    assert missing.is_error and "is required" in missing.content[0].text
    with pytest.raises(MCPError) as e:
        await client.call_tool("no_such_tool", {})
    assert e.value.error.code == -32602


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_streamable_http_json_replies(json_mock, mode, version):
    fresh = not warmed(json_mock.base)
    async with Client(json_mock.base + "/mcp", mode=mode) as c:
        await exercise(c, version, fresh)


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_streamable_http_sse_replies(sse_mock, mode, version):
    fresh = not warmed(sse_mock.base)
    async with Client(sse_mock.base + "/mcp", mode=mode) as c:
        await exercise(c, version, fresh)


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_stdio_in_its_own_process(scenario_file, mode, version):
    async with Client(stdio("--scenario", scenario_file), mode=mode) as c:
        await exercise(c, version, fresh=True)


@pytest.mark.parametrize("mode,version", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_stdio_relaying_to_the_mock(sse_mock, mode, version):
    fresh = not warmed(sse_mock.base)
    async with Client(stdio("--mock", sse_mock.base), mode=mode) as c:
        await exercise(c, version, fresh)
    ledger = get_json(sse_mock.base, "/plimsoll/ledger")["mcp"]
    assert ledger["transports"]["stdio"] >= 11 and ledger["stdio_servers"] >= 1


def test_the_ledger_counts_calls_per_tool_and_the_latency(json_mock):
    m = get_json(json_mock.base, "/plimsoll/ledger")["mcp"]
    assert m["tools"]["slow"]["calls"] >= 2
    assert 149 <= m["tools"]["slow"]["p50_ms"] <= 151
    assert m["errors_by_kind"]["rpc_error"] >= 2 and m["errors_by_kind"]["unknown_tool"] >= 2
    assert m["transports"]["http"] >= 20
    assert (m["tools"]["warming"]["calls"], m["tools"]["warming"]["errors"]) == (4, 1)
