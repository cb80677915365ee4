// Runs one scripted tool under Node.js for the trailblaze host: the subprocess runtime.
//
// stdin: {"module", "name", "args"}; stdout: one line, {"ok":true,"value","readOnly"} or
// {"ok":false,"error":{...}}; then the process exits, so nothing the tool left behind keeps running.
// `ctx` comes from the one SDK's `makeContext`; its bindings call the host back over
// POST /scripting/callback (loopback, bearer token): `ctx.tools` asynchronously, `ctx.host`
// synchronously (a worker thread does the request while this thread waits on an Atomics flag).
import { readFileSync } from "node:fs";
import { register } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";

const env = process.env;
const url = env.TRAILBLAZE_CALLBACK_URL;
const token = env.TRAILBLAZE_TOKEN;
const run = Number(env.TRAILBLAZE_RUN);
const root = env.TRAILBLAZE_ROOT;
const here = path.dirname(fileURLToPath(import.meta.url));
const sdkUrl = pathToFileURL(path.join(here, "sdk.mjs")).href;

// stdout carries the result line only. A script's console goes to stderr, one JSON line per call,
// formatted as the embedded engine formats it; the host reads, scrubs and bounds each line.
const { formatLine, LEVELS } = await import(pathToFileURL(path.join(here, "console.mjs")).href);
for (const level of LEVELS) {
  console[level] = (...args) => {
    process.stderr.write(JSON.stringify({ console: level, text: formatLine(args) }) + "\n");
  };
}

// A promise the tool did not await that fails fails the tool, as in the embedded engine.
const unhandled = new Map();
process.on("unhandledRejection", (reason, promise) => unhandled.set(promise, reason));
process.on("rejectionHandled", (promise) => unhandled.delete(promise));
// ctx.tools calls still in flight when the handler returns: the tool's outcome waits for them.
const inflight = new Set();
function track(p) {
  inflight.add(p);
  const done = () => inflight.delete(p);
  p.then(done, done);
  return p;
}
async function settleInflight() {
  while (inflight.size > 0) await Promise.allSettled([...inflight]);
  // Node reports unhandled rejections once the microtask queue drains.
  await new Promise((r) => setImmediate(r));
}

register(pathToFileURL(path.join(here, "hooks.mjs")).href, { data: { root, sdkUrl, url, token, run } });

const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

async function post(body) {
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ ...body, run }) });
  return response.ok ? response.json() : { ok: false, error: `callback refused (${response.status})` };
}

// The synchronous channel for ctx.host, started on the first host call (a worker is a whole V8
// isolate: a tool that never calls ctx.host should not pay for one).
const flag = new Int32Array(new SharedArrayBuffer(4));
let port1;
// The worker posts each request and sets the flag when the reply is on the port.
const WORKER = `
const { workerData } = require("node:worker_threads");
const { port, flag, url, headers } = workerData;
port.on("message", async (body) => {
  let reply;
  try {
    const response = await fetch(url, { method: "POST", headers, body });
    reply = response.ok ? await response.json() : { ok: false, error: "callback refused (" + response.status + ")" };
  } catch (e) {
    reply = { ok: false, error: "the host did not answer: " + (e && e.message) };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

function startWorker() {
  const { port1: mine, port2: theirs } = new MessageChannel();
  port1 = mine;
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { port: theirs, flag, url, headers },
    transferList: [theirs],
  });
  worker.unref();
}

function postSync(body) {
  if (port1 === undefined) startWorker();
  Atomics.store(flag, 0, 0);
  port1.postMessage(JSON.stringify({ ...body, run }));
  while (Atomics.load(flag, 0) === 0) Atomics.wait(flag, 0, 0);
  return receiveMessageOnPort(port1).message;
}

// What the host needs to word a failure exactly as the embedded engine does.
function describe(e) {
  if (e !== null && typeof e === "object" && typeof e.message === "string") {
    return { name: typeof e.name === "string" ? e.name : null, message: e.message, stack: typeof e.stack === "string" ? e.stack : null };
  }
  return { thrown: typeof e === "string" ? e : null };
}

let outcome;
try {
  const { module, name, args } = JSON.parse(readFileSync(0, "utf8"));
  const sdk = await import(sdkUrl);
  const exports = await import(pathToFileURL(path.join(root, module)).href);
  // The original's `.js` tools export a plain `function name(args, ctx)`, described by a `.yaml`.
  const tool = typeof exports[name] === "function" ? { handler: exports[name] } : exports[name];
  if (tool === null || typeof tool !== "object" || (tool.__trailblazeTool !== true && typeof exports[name] !== "function")) {
    outcome = { ok: false, error: { plain: `${module} does not export \`${name}\` as \`export const ${name} = trailblaze.tool(...)\`` } };
  } else {
    const ctx = sdk.makeContext({
      callTool: (n, a) => track((async () => sdk.unwrapEnvelope(await post({ action: "call_tool", name: n, args: a }), n))()),
      callHost: (n, a) => sdk.unwrapEnvelope(postSync({ action: "call_host", name: n, args: a }), n),
    });
    const value = await tool.handler(args, ctx);
    await settleInflight();
    const [first] = unhandled.values();
    outcome = unhandled.size > 0
      ? { ok: false, error: { unawaited: { tool: first instanceof sdk.TrailblazeToolError ? first.tool : null, ...describe(first) } } }
      : { ok: true, value: value === undefined ? null : value, readOnly: tool.spec?.readOnly === true };
  }
} catch (e) {
  outcome = { ok: false, error: describe(e) };
}
let line;
try {
  line = JSON.stringify(outcome);
} catch (e) {
  line = JSON.stringify({ ok: false, error: { plain: `its result: ${e.message}` } });
}
process.stdout.write(line + "\n", () => process.exit(0));
