// The mock's MCP tools through the official TypeScript SDK (@modelcontextprotocol/sdk,
// whose client initializes at 2025-11-25): initialise, list and call every declared tool
// over Streamable HTTP (JSON and SSE replies) and over stdio (`plimsoll mcp --stdio`, in
// its own process and relaying to the mock), injected failures seen as the SDK's own
// types (McpError for a JSON-RPC error, isError for a tool error).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { BIN, startMock } from "./mock.js";

const TOOLS = `
[[mcp.tools]]
name = "search"
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
name = "slow"
latency_ms = 120
[[mcp.tools]]
name = "broken"
failures = { rpc_error = 1.0 }
[[mcp.tools]]
name = "grumpy"
failures = { tool_error = 1.0 }
`;
const DECLARED = ["search", "fetch", "kv_put", "kv_get", "slow", "broken", "grumpy"];

let json, sse, dir, scenario;
before(async () => {
  json = await startMock(`[mcp]\nreply = "json"\n${TOOLS}`);
  sse = await startMock(`[mcp]\nreply = "sse"\n${TOOLS}`);
  dir = mkdtempSync(join(tmpdir(), "plimsoll-mcp-"));
  scenario = join(dir, "tools.toml");
  writeFileSync(scenario, `[mcp]\n${TOOLS}`);
});
after(() => {
  json.stop();
  sse.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function exercise(transport) {
  const client = new Client({ name: "plimsoll-conformance", version: "1.0.0" });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion().name, "plimsoll-mcp");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), DECLARED);
    assert.deepEqual(tools.find((t) => t.name === "kv_put").inputSchema.required, ["key", "value"]);
    let r = await client.callTool({ name: "search", arguments: { query: "plimsoll" } });
    assert.deepEqual(JSON.parse(r.content[0].text), { query: "plimsoll" });
    r = await client.callTool({ name: "fetch", arguments: { id: "d1" } });
    assert.equal(r.content[0].text.length, 3000);
    r = await client.callTool({ name: "kv_put", arguments: { key: "k", value: "v-7" } });
    assert.equal(r.content[0].text, "stored k");
    r = await client.callTool({ name: "kv_get", arguments: { key: "k" } });
    assert.equal(r.content[0].text, "v-7");
    const t0 = Date.now();
    r = await client.callTool({ name: "slow", arguments: {} });
    assert.ok(Date.now() - t0 >= 110, "the tool's latency");
    await assert.rejects(client.callTool({ name: "broken", arguments: {} }), (e) => {
      assert.ok(e instanceof McpError, `${e}`);
      assert.equal(e.code, -32603);
      return true;
    });
    r = await client.callTool({ name: "grumpy", arguments: {} });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /tool_error injected/);
    await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }), (e) => e instanceof McpError && e.code === -32602);
    await client.ping();
  } finally {
    await client.close();
  }
}

test("Streamable HTTP, JSON replies", async () => {
  await exercise(new StreamableHTTPClientTransport(new URL(`${json.base}/mcp`)));
  const m = (await json.ledger()).mcp;
  assert.equal(m.tools.broken.errors, 1);
  assert.equal(m.transports.http, 7, "every call but the unknown tool");
});

test("Streamable HTTP, SSE replies", async () => {
  await exercise(new StreamableHTTPClientTransport(new URL(`${sse.base}/mcp`)));
});

test("stdio, the server in its own process", async () => {
  await exercise(new StdioClientTransport({ command: BIN, args: ["mcp", "--stdio", "--scenario", scenario] }));
});

test("stdio, relaying to the mock", async () => {
  await exercise(new StdioClientTransport({ command: BIN, args: ["mcp", "--stdio", "--mock", sse.base] }));
  const m = (await sse.ledger()).mcp;
  assert.ok(m.transports.stdio === 7 && m.stdio_servers === 1, JSON.stringify(m.transports));
});
