// The warm Node worker of the trailblaze subprocess runtime: one process per session, started on the
// session's first `runtime: subprocess` call, serving calls until its stdin closes or the host kills
// its process group (a call's deadline or cancellation, a crash, the session's end).
//
// JSON lines, no socket (so no token: only the host holds the pipes):
//   stdin  (host → worker): {"call":run,"module","name","args"} | {"reply":id,"ok","value"|"error"}
//   stdout (worker → host): {"request":id,"run","action",...} | {"result":run,"ok",...}
//           (actions: call_tool, call_host, fetch, load_module)
//   stderr: console lines {"console":level,"text","run"}, a run's end {"fence":run} (written before
//           its result, so the host has every line of the run when it sees the result), and
//           whatever else a tool or Node writes (raw lines).
// `ctx.tools` requests have positive ids and are awaited; `ctx.host` requests negative ids and are
// synchronous: on the two descriptors TRAILBLAZE_HOST_FDS names (Unix: "3,4"), this thread writes
// the request to the second and blocks reading its reply from the first, which the host's session
// thread serves itself. Without them, requests go on stdout and a reader thread owns stdin and
// hands a negative reply over a port while this thread sleeps on an Atomics flag.
//
// Isolation: each call gets a fresh `vm` context with its own instances of the SDK, the console glue
// and every module it imports, so globals one call sets are gone for the next; timers a call leaves
// are cleared when it ends. Only `process` is shared (as before, a tool may read its environment
// and write to stderr).
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";

const root = process.env.TRAILBLAZE_ROOT;
const [replyFd, requestFd] = (process.env.TRAILBLAZE_HOST_FDS ?? "").split(",").map((n) => (n === "" ? undefined : Number(n)));
delete process.env.TRAILBLAZE_HOST_FDS;
const here = path.dirname(fileURLToPath(import.meta.url));
const rootUrl = pathToFileURL(root.endsWith("/") ? root : root + "/").href;
const sdkUrl = pathToFileURL(path.join(here, "sdk.mjs")).href;
const consoleUrl = pathToFileURL(path.join(here, "console.mjs")).href;
// The host's own files, compiled once and then from V8's code cache in every call's context.
const builtins = new Map(
  [sdkUrl, consoleUrl].map((url) => [url, { source: fs.readFileSync(fileURLToPath(url), "utf8"), cache: undefined }]),
);

// `vm` modules are experimental in Node 20-24: its one-time warning is not the tool's to see.
// Other warnings still reach stderr, as Node words them.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "ExperimentalWarning") process.stderr.write(`(node:${process.pid}) ${w.name}: ${w.message}\n`);
});

// stdout is the protocol's: a tool's writes to process.stdout go to stderr, as raw lines.
Object.defineProperty(process, "stdout", { get: () => process.stderr, configurable: true });
function send(msg) {
  sendLine(JSON.stringify(msg));
}
function sendLine(line, fd = 1) {
  const bytes = Buffer.from(line + "\n");
  let at = 0;
  while (at < bytes.length) {
    try {
      at += fs.writeSync(fd, bytes, at);
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
    }
  }
}

// The reader thread. Reading via a socket on fd 0 (not a blocking read) lets the process exit at
// once when a tool calls process.exit.
const READER = `
const net = require("node:net");
const { workerData } = require("node:worker_threads");
const { port, syncPort, flag } = workerData;
const input = new net.Socket({ fd: 0, readable: true, writable: false });
input.setEncoding("utf8");
let pending = "";
input.on("data", (chunk) => {
  pending += chunk;
  let i;
  while ((i = pending.indexOf("\\n")) >= 0) {
    const line = pending.slice(0, i);
    pending = pending.slice(i + 1);
    if (line.trim() === "") continue;
    const msg = JSON.parse(line);
    if (typeof msg.reply === "number" && msg.reply < 0) {
      syncPort.postMessage(msg);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    } else {
      port.postMessage(msg);
    }
  }
});
input.on("end", () => port.postMessage({ eof: true }));
input.on("error", () => port.postMessage({ eof: true }));
`;
const flag = new Int32Array(new SharedArrayBuffer(4));
const { port1: inbox, port2: inboxEnd } = new MessageChannel();
const { port1: syncInbox, port2: syncEnd } = new MessageChannel();
new Worker(READER, {
  eval: true,
  workerData: { port: inboxEnd, syncPort: syncEnd, flag },
  transferList: [inboxEnd, syncEnd],
}).unref();

let nextId = 1;
let nextSyncId = -1;
const waiting = new Map();
function request(run, body) {
  const id = nextId++;
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    send({ ...body, request: id, run });
  });
}
function requestSync(run, body) {
  const id = nextSyncId--;
  if (replyFd !== undefined && requestFd !== undefined) {
    sendLine(JSON.stringify({ ...body, request: id, run }), requestFd);
    return readSyncReply();
  }
  Atomics.store(flag, 0, 0);
  send({ ...body, request: id, run });
  while (Atomics.load(flag, 0) === 0) Atomics.wait(flag, 0, 0);
  return receiveMessageOnPort(syncInbox).message;
}

// One line from the reply descriptor (a blocking pipe; calls are one at a time, so the next line
// is this call's reply). Bytes are split at the newline, which no UTF-8 sequence contains.
const syncChunk = Buffer.allocUnsafe(64 * 1024);
let syncPending = Buffer.alloc(0);
function readSyncReply() {
  for (;;) {
    const nl = syncPending.indexOf(10);
    if (nl >= 0) {
      const line = syncPending.toString("utf8", 0, nl);
      syncPending = syncPending.subarray(nl + 1);
      return JSON.parse(line);
    }
    let n;
    try {
      n = fs.readSync(replyFd, syncChunk, 0, syncChunk.length, null);
    } catch (e) {
      if (e.code === "EAGAIN" || e.code === "EINTR") continue;
      throw e;
    }
    // The host is gone: nothing will answer, and nothing else is left to do.
    if (n === 0) process.exit(0);
    const read = Buffer.from(syncChunk.subarray(0, n));
    syncPending = syncPending.length === 0 ? read : Buffer.concat([syncPending, read]);
  }
}

/** Calls in progress by run id, in start order (innermost last). */
const runs = new Map();
function innermost() {
  let last;
  for (const r of runs.values()) last = r;
  return last;
}
// A promise made in a call's context belongs to that call; any other to the innermost call.
function ownerOf(promise) {
  for (const r of runs.values()) if (promise instanceof r.Promise) return r;
  return innermost();
}
process.on("unhandledRejection", (reason, promise) => ownerOf(promise)?.unhandled.set(promise, reason));
process.on("rejectionHandled", (promise) => {
  for (const r of runs.values()) r.unhandled.delete(promise);
});
// A throw outside the handler's promise chain (a timer's callback) fails the innermost call, not
// the worker and every call it serves.
process.on("uncaughtException", (e) => {
  const r = innermost();
  if (r) r.abort(e);
  else process.stderr.write(`${e && e.stack ? e.stack : String(e)}\n`);
});

/** Timer functions for one call: what it leaves running is cleared when it ends. */
function timers(r) {
  const guard = (fn) =>
    typeof fn === "function"
      ? function (...a) {
          try {
            return fn.apply(this, a);
          } catch (e) {
            r.abort(e);
          }
        }
      : fn;
  const pair = (set, clear, kept) => [
    (fn, ...rest) => {
      const h = set(guard(fn), ...rest);
      kept.add(h);
      return h;
    },
    (h) => {
      kept.delete(h);
      clear(h);
    },
  ];
  const [setT, clearT] = pair(setTimeout, clearTimeout, r.timeouts);
  const [setI, clearI] = pair(setInterval, clearInterval, r.timeouts);
  const [setImm, clearImm] = pair(setImmediate, clearImmediate, r.immediates);
  return { setTimeout: setT, clearTimeout: clearT, setInterval: setI, clearInterval: clearI, setImmediate: setImm, clearImmediate: clearImm };
}

function newRun(id) {
  const r = { id, modules: new Map(), unhandled: new Map(), inflight: new Set(), timeouts: new Set(), immediates: new Set() };
  r.aborted = new Promise((_, reject) => {
    r.abort = reject;
  });
  r.aborted.catch(() => {});
  const { URL, URLSearchParams, TextEncoder, TextDecoder, AbortController, AbortSignal, Buffer } = globalThis;
  r.context = vm.createContext({
    process,
    Buffer,
    URL,
    URLSearchParams,
    TextEncoder,
    TextDecoder,
    AbortController,
    AbortSignal,
    atob,
    btoa,
    structuredClone,
    queueMicrotask,
    fetch,
    performance,
    ...timers(r),
  });
  r.Promise = vm.runInContext("Promise", r.context);
  runs.set(id, r);
  return r;
}

function endRun(r) {
  runs.delete(r.id);
  for (const h of r.timeouts) clearTimeout(h);
  for (const h of r.immediates) clearImmediate(h);
}

/** Where an import inside the trailmaps folder points: the same rules as the embedded engine. */
function resolve(specifier, parentUrl) {
  if (specifier === "@trailblaze/scripting") return sdkUrl;
  if (!parentUrl.startsWith(rootUrl)) throw new Error(`${specifier}: cannot be imported here`);
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
    throw new Error(`${specifier}: only \`@trailblaze/scripting\` and relative \`.ts\` files can be imported`);
  }
  let url = new URL(specifier, parentUrl).href;
  if (!url.startsWith(rootUrl)) throw new Error(`${specifier}: the import leaves the trailmaps folder`);
  if (url.endsWith(".js")) url = url.slice(0, -3) + ".ts";
  else if (!url.endsWith(".ts")) url += ".ts";
  return url;
}

/** A module's JavaScript: a `.ts` file transpiled by the host's swc, an original `.js` tool read as is. */
async function source(r, url) {
  if (!url.endsWith(".ts")) return fs.readFileSync(fileURLToPath(url), "utf8");
  const reply = await request(r.id, { action: "load_module", module: decodeURIComponent(url.slice(rootUrl.length)) });
  if (reply.ok !== true) throw new Error(reply.error);
  return reply.value.code;
}

/** Module `url` in call `r`'s context, made once per call. */
function moduleAt(r, url) {
  let made = r.modules.get(url);
  if (made === undefined) {
    made = (async () => {
      const builtin = builtins.get(url);
      const options = {
        identifier: url,
        context: r.context,
        cachedData: builtin?.cache,
        importModuleDynamically: async (specifier, referrer) => {
          const m = await moduleAt(r, resolve(specifier, referrer.identifier));
          await ready(r, m);
          return m;
        },
      };
      const m = new vm.SourceTextModule(builtin ? builtin.source : await source(r, url), options);
      if (builtin && builtin.cache === undefined) builtin.cache = m.createCachedData();
      return m;
    })();
    r.modules.set(url, made);
  }
  return made;
}

async function ready(r, m) {
  if (m.status === "unlinked") await m.link((specifier, referrer) => moduleAt(r, resolve(specifier, referrer.identifier)));
  if (m.status === "linked") await m.evaluate();
  if (m.status === "errored") throw m.error;
  return m.namespace;
}

// What the host needs to word a failure exactly as the embedded engine does.
function describe(e) {
  if (e !== null && typeof e === "object" && typeof e.message === "string") {
    return { name: typeof e.name === "string" ? e.name : null, message: e.message, stack: typeof e.stack === "string" ? e.stack : null };
  }
  return { thrown: typeof e === "string" ? e : null };
}

async function settleInflight(r) {
  while (r.inflight.size > 0) await Promise.allSettled([...r.inflight]);
  // Node reports unhandled rejections once the microtask queue drains.
  await new Promise((done) => setImmediate(done));
}

async function outcomeOf(r, { module, name, args }) {
  const run = r.id;
  // The SDK and the console glue first, so the tool's imports find them made.
  const sdk = await ready(r, await moduleAt(r, sdkUrl));
  const { formatLine, LEVELS } = await ready(r, await moduleAt(r, consoleUrl));
  const console = {};
  for (const level of LEVELS) {
    console[level] = (...a) => process.stderr.write(JSON.stringify({ console: level, text: formatLine(a), run }) + "\n");
  }
  r.context.console = console;
  const exports = await Promise.race([ready(r, await moduleAt(r, pathToFileURL(path.join(root, module)).href)), r.aborted]);
  // The original's `.js` tools export a plain `function name(args, ctx)`, described by a `.yaml`.
  const tool = typeof exports[name] === "function" ? { handler: exports[name] } : exports[name];
  if (tool === null || typeof tool !== "object" || (tool.__trailblazeTool !== true && typeof exports[name] !== "function")) {
    return { ok: false, error: { plain: `${module} does not export \`${name}\` as \`export const ${name} = trailblaze.tool(...)\`` } };
  }
  const track = (p) => {
    r.inflight.add(p);
    const done = () => r.inflight.delete(p);
    p.then(done, done);
    return p;
  };
  const ctx = sdk.makeContext({
    callTool: (n, a) => track((async () => sdk.unwrapEnvelope(await request(run, { action: "call_tool", name: n, args: a }), n))()),
    callHost: (n, a) => sdk.unwrapEnvelope(requestSync(run, { action: "call_host", name: n, args: a }), n),
    // The host makes the exchange, under the trailmap's `network` rules (Node's own `fetch` in the
    // context is not mediated: see docs/scripted-tools.md).
    fetch: (req) => track((async () => sdk.unwrapEnvelope(await request(run, { action: "fetch", args: req }), "fetch"))()),
  });
  const value = await Promise.race([tool.handler(args, ctx), r.aborted]);
  await Promise.race([settleInflight(r), r.aborted]);
  const [first] = r.unhandled.values();
  return r.unhandled.size > 0
    ? { ok: false, error: { unawaited: { tool: first instanceof sdk.TrailblazeToolError ? first.tool : null, ...describe(first) } } }
    : { ok: true, value: value === undefined ? null : value, readOnly: tool.spec?.readOnly === true };
}

async function serve(call) {
  const r = newRun(call.call);
  let outcome;
  try {
    outcome = await outcomeOf(r, call);
  } catch (e) {
    outcome = { ok: false, error: describe(e) };
  }
  endRun(r);
  let line;
  try {
    line = JSON.stringify({ ...outcome, result: r.id });
  } catch (e) {
    line = JSON.stringify({ ok: false, error: { plain: `its result: ${e.message}` }, result: r.id });
  }
  process.stderr.write(JSON.stringify({ fence: r.id }) + "\n");
  sendLine(line);
}

inbox.on("message", (msg) => {
  if (msg.eof) process.exit(0);
  else if (typeof msg.call === "number") serve(msg);
  else if (typeof msg.reply === "number") {
    const resolve = waiting.get(msg.reply);
    waiting.delete(msg.reply);
    resolve?.(msg);
  }
});
