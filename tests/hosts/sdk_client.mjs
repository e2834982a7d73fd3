// The official TypeScript MCP SDK as a host of `agentmem mcp`: lists the tools, calls
// them (the SDK checks each structured result against the tool's output schema), and
// reports what it saw as one JSON line on stdout.
//
// node sdk_client.mjs stdio <command> [args...]     (AGENTMEM_* from the environment)
// node sdk_client.mjs http <url> <token>
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.AGENTMEM_HOSTS, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require(
  "@modelcontextprotocol/sdk/client/streamableHttp.js",
);

const [mode, target, ...rest] = process.argv.slice(2);
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: `Bearer ${rest[0]}` } },
      });
const client = new Client({ name: "typescript-sdk-host", version: "1.0.0" });
await client.connect(transport);

const report = { tools: {}, calls: {}, errors: {} };
for (const tool of (await client.listTools()).tools) {
  report.tools[tool.name] = {
    input: tool.inputSchema,
    output: tool.outputSchema ?? null,
    readOnly: tool.annotations?.readOnlyHint ?? null,
  };
}
const call = async (name, args, key = name) => {
  const result = await client.callTool({ name, arguments: args });
  report.calls[key] = { isError: result.isError ?? false, structured: result.structuredContent ?? null,
    text: result.content?.map((c) => c.text ?? "").join("") };
  return result;
};
const saved = await call("memory_insert", {
  content: "I play a yellow Squier Tele",
  save_intent: "explicit_user_request",
  save_intent_source: "typescript-sdk-host",
  thread_id: "ts-sdk",
});
await call("memory_search", { query: "Squier" });
const mode_ = await call("memory_thread_mode_get", { thread_id: "ts-sdk" });
// a value read is passed back as it is
await call("memory_thread_mode_set", {
  thread_id: "ts-sdk",
  mode: "disabled",
  expected_revision: mode_.structuredContent.revision,
});
await call("memory_pending_approve", { source_id: "src_missing", expected_revision: 1 });
try {
  await client.callTool({ name: "memory_no_such_tool", arguments: {} });
  report.errors.unknownTool = null;
} catch (e) {
  report.errors.unknownTool = e.code ?? String(e);
}
await call("memory_search", { query: "x", limit: 1000 }, "memory_search_limit");
report.saved = saved.structuredContent;
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
