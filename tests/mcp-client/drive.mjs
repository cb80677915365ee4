// Drives `trailblaze mcp` with the official MCP TypeScript SDK client, for tests/e2e/mcp.rs.
//
//   node drive.mjs stdio <trailblaze binary> <args...>   (spawns the server, talks over its stdio)
//   node drive.mjs http <url>                            (connects over streamable HTTP, sending
//                                                         the bearer token of $TRAILBLAZE_MCP_TOKEN)
//
// Reads a JSON list of operations on stdin and prints a JSON list of results on stdout:
//   {"op":"list"}                                          -> {"tools":[{name, description, inputSchema}]}
//   {"op":"call","tool":T,"args":{...}}                    -> {"isError":bool,"text":"..."}
//   {"op":"call",...,"abortAfterMs":N}                     -> the same, or {"aborted":true}
//   {"op":"bench","tool":T,"args":{...},"n":N}             -> {"micros":[one round trip per call, µs]}
//   {"op":"write","path":P,"text":T}                      -> {} (a file edited mid-session, as a person would)
//   {"op":"listResources"}                                 -> {"resources":[{uri, name, ...}], "templates":[...],
//                                                             "capability":bool}
//   {"op":"readResource","uri":U}                          -> {"contents":[{uri, mimeType, text}]}, or
//                                                             {"error":{"code":N,"message":"..."}} (a JSON-RPC error)
//   {"op":"notifications"}                                 -> {"toolListChanged":N, "capability":bool}
//     (how many `notifications/tools/list_changed` arrived so far, and whether the server announced them)
// Over HTTP, "client":"a"|"b"|... picks (and on first use connects) one of several clients at once.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { writeFileSync } from "node:fs";

const [mode, target, ...rest] = process.argv.slice(2);
const ops = JSON.parse(await new Promise((resolve) => {
  let data = "";
  process.stdin.on("data", (d) => (data += d));
  process.stdin.on("end", () => resolve(data));
}));

const clients = new Map();
const toolListChanged = new Map();
async function client(name = "default") {
  if (clients.has(name)) return clients.get(name);
  const c = new Client({ name: `trailblaze-e2e-${name}`, version: "1.0.0" });
  toolListChanged.set(name, 0);
  c.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    toolListChanged.set(name, toolListChanged.get(name) + 1);
  });
  const transport = mode === "stdio"
    ? new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: `Bearer ${process.env.TRAILBLAZE_MCP_TOKEN ?? ""}` } },
      });
  await c.connect(transport);
  clients.set(name, c);
  return c;
}

const results = [];
for (const op of ops) {
  const c = await client(op.client);
  if (op.op === "list") {
    const { tools } = await c.listTools();
    results.push({ tools });
  } else if (op.op === "call") {
    const controller = new AbortController();
    if (op.abortAfterMs !== undefined) setTimeout(() => controller.abort("the test cancels"), op.abortAfterMs);
    try {
      const r = await c.callTool({ name: op.tool, arguments: op.args ?? {} }, undefined, { signal: controller.signal });
      const text = r.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
      results.push({ isError: r.isError === true, text });
    } catch (e) {
      if (!controller.signal.aborted) throw e;
      results.push({ aborted: true });
    }
  } else if (op.op === "bench") {
    const micros = [];
    for (let i = 0; i < op.n; i++) {
      const t0 = process.hrtime.bigint();
      const r = await c.callTool({ name: op.tool, arguments: op.args ?? {} });
      micros.push(Number(process.hrtime.bigint() - t0) / 1000);
      if (r.isError) throw new Error(`call ${i} failed`);
    }
    results.push({ micros });
  } else if (op.op === "write") {
    writeFileSync(op.path, op.text);
    results.push({});
  } else if (op.op === "listResources") {
    const { resources } = await c.listResources();
    const { resourceTemplates } = await c.listResourceTemplates();
    const capability = c.getServerCapabilities()?.resources !== undefined;
    results.push({ resources, templates: resourceTemplates, capability });
  } else if (op.op === "readResource") {
    try {
      const { contents } = await c.readResource({ uri: op.uri });
      results.push({ contents });
    } catch (e) {
      if (typeof e?.code !== "number") throw e;
      results.push({ error: { code: e.code, message: e.message } });
    }
  } else if (op.op === "notifications") {
    const capability = c.getServerCapabilities()?.tools?.listChanged === true;
    results.push({ toolListChanged: toolListChanged.get(op.client ?? "default"), capability });
  } else {
    throw new Error(`unknown op ${JSON.stringify(op.op)}`);
  }
}
for (const c of clients.values()) await c.close();
process.stdout.write(JSON.stringify(results));
