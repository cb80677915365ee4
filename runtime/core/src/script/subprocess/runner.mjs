// The warm Node worker of the trailblaze subprocess runtime: one process per session, started on the
// session's first `runtime: subprocess` call, serving calls until its stdin closes or the host kills
// its process group (a call's deadline or cancellation, a crash, the session's end).
//
// JSON lines, no socket (so no token: only the host holds the pipes):
//   stdin  (host → worker): {"call":run,"module","name","args"} | {"reply":id,"ok","value"|"error"}
//   stdout (worker → host): {"request":id,"run","action",...} | {"result":run,"ok",...}
//           (actions: call_tool, call_host, fetch, load_module)
//   stderr: console lines {"console":level,"text","run"} (a tool's own writes to process.stdout and
//           process.stderr too, a line each), a run's end {"fence":run} (written before its result,
//           so the host has every line of the run when it sees the result), and what Node itself
//           writes (raw lines).
// `ctx.tools` requests have positive ids and are awaited; `ctx.host` requests negative ids and are
// synchronous: on the two descriptors TRAILBLAZE_HOST_FDS names (Unix: "3,4"), this thread writes
// the request to the second and blocks reading its reply from the first, which the host's session
// thread serves itself. Without them, requests go on stdout and a reader thread owns stdin and
// hands a negative reply over a port while this thread sleeps on an Atomics flag.
//
// Isolation: each call runs in a fresh `vm` context whose every global is made inside it
// (realm*.js): its own intrinsics, its own `process`, `console`, timers, `Buffer`, `URL`, ... and its
// own instances of the SDK, the console glue and every module it imports. No object of this realm
// reaches a call, so nothing a call changes is seen by the next, and no call can reach what this
// module uses to speak the protocol; those primitives are taken below before any call exists all
// the same. Timers a call leaves are cleared when it ends.
import fs from "node:fs";
import path from "node:path";
import vm from "node:vm";
import { fileURLToPath, pathToFileURL } from "node:url";
import { types } from "node:util";
import { MessageChannel, Worker, receiveMessageOnPort } from "node:worker_threads";
import { BUFFER_MEMBERS, makeHost } from "./host.mjs";

const { stringify, parse } = JSON;
const { writeSync, readSync } = fs;
const BufferFrom = Buffer.from;
const BufferConcat = Buffer.concat;
const byteLength = Buffer.byteLength;
const uncurry = (fn) => Function.prototype.call.bind(fn);
const bufIndexOf = uncurry(Buffer.prototype.indexOf);
const bufToString = uncurry(Buffer.prototype.toString);
const bufSubarray = uncurry(Buffer.prototype.subarray);
const getPrototypeOf = Object.getPrototypeOf;
const exit = process.exit.bind(process);

/** The longest protocol line (a request or a result): the host stops a worker that writes longer. */
const MAX_LINE = 16 << 20;
/** What one call may print (console and its own writes) before the rest is dropped with a note. */
const MAX_OUTPUT_LINES = 2000;
const MAX_OUTPUT_CHARS = 4 << 20;
/** The longest line of a call's own writes; the rest of a longer one is dropped with a note. */
const MAX_RAW_LINE = 64 << 10;

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
// A call's globals, compiled once and run in each call's context (one script: each run costs).
const realm = new vm.Script(
  `(function (host) {
  "use strict";
  const api = (${fs.readFileSync(path.join(here, "realm.js"), "utf8")})(host);
  for (const install of [
    ${["realm-events.js", "realm-bytes.js", "realm-url.js"]
      .map((name) => fs.readFileSync(path.join(here, name), "utf8").replace("/* NODE_METHODS */", BUFFER_MEMBERS))
      .join(",\n")}
  ]) install(host, api);
  return api;
})`,
  { filename: "trailblaze:realm.js" },
);

// `vm` modules are experimental in Node 20-24: its one-time warning is not the tool's to see.
// Other warnings still reach stderr, as Node words them.
process.removeAllListeners("warning");
process.on("warning", (w) => {
  if (w.name !== "ExperimentalWarning") writeText(2, `(node:${process.pid}) ${w.name}: ${w.message}\n`);
});

/** Writes all of `text` to `fd`. */
function writeText(fd, text) {
  const bytes = BufferFrom(text);
  let at = 0;
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at);
    } catch (e) {
      if (e.code !== "EAGAIN") throw e;
    }
  }
}

/** Whether `line` is longer than the host takes (it stops a worker that writes one). */
const tooLong = (line) => line.length * 3 > MAX_LINE && byteLength(line) > MAX_LINE;
const TOO_LONG = `larger than ${MAX_LINE >> 20} MiB, the most one message to the host may be`;

/** A protocol line, refused (thrown, before anything is written) past the host's cap. */
function sendLine(line, fd = 1) {
  if (tooLong(line)) throw new RangeError(`the request is ${TOO_LONG}`);
  writeText(fd, line + "\n");
}

// The reader thread: its own realm, which no call reaches. Reading via a socket on fd 0 (not a
// blocking read) lets the process exit at once when a tool calls process.exit. A line is passed on
// as text (a reply's value is parsed in the call's own context, not here).
const READER = `
const net = require("node:net");
const { workerData } = require("node:worker_threads");
const { port, syncPort, flag } = workerData;
const input = new net.Socket({ fd: 0, readable: true, writable: false });
input.setEncoding("utf8");
let pending = "";
input.on("data", (chunk) => {
  let from = pending.length;
  pending += chunk;
  let i;
  while ((i = pending.indexOf("\\n", from)) >= 0) {
    const line = pending.slice(0, i);
    pending = pending.slice(i + 1);
    from = 0;
    if (line.trim() === "") continue;
    const msg = JSON.parse(line);
    if (typeof msg.reply === "number" && msg.reply < 0) {
      syncPort.postMessage(line);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    } else if (typeof msg.reply === "number") {
      port.postMessage({ reply: msg.reply, line });
    } else if (typeof msg.call === "number") {
      port.postMessage({ call: msg.call, module: String(msg.module), name: String(msg.name), line });
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
/** Requests awaiting their reply, by id: the run and the call's callback for the reply's text. */
const waiting = new Map();

/** Sends request `body` of run `r`; `onReply(text)` gets the reply's line. Throws what keeps it from going. */
function request(r, body, onReply) {
  const id = nextId++;
  sendLine(stringify({ ...body, request: id, run: r.id }));
  waiting.set(id, { r, onReply });
  r.outstanding++;
}

/** A `ctx.host` request of run `r`, answered before it returns: the reply's line. */
function requestSync(r, body) {
  const id = nextSyncId--;
  const line = stringify({ ...body, request: id, run: r.id });
  if (replyFd !== undefined && requestFd !== undefined) {
    sendLine(line, requestFd);
    return readSyncReply();
  }
  Atomics.store(flag, 0, 0);
  sendLine(line);
  while (Atomics.load(flag, 0) === 0) Atomics.wait(flag, 0, 0);
  return receiveMessageOnPort(syncInbox).message;
}

// One line from the reply descriptor (a blocking pipe; calls are one at a time, so the next line
// is this call's reply). Bytes are split at the newline, which no UTF-8 sequence contains.
const syncChunk = Buffer.allocUnsafe(64 * 1024);
let syncPending = Buffer.alloc(0);
function readSyncReply() {
  let from = 0;
  for (;;) {
    const nl = bufIndexOf(syncPending, 10, from);
    if (nl >= 0) {
      const line = bufToString(syncPending, "utf8", 0, nl);
      syncPending = bufSubarray(syncPending, nl + 1);
      return line;
    }
    from = syncPending.length;
    let n;
    try {
      n = readSync(replyFd, syncChunk, 0, syncChunk.length, null);
    } catch (e) {
      if (e.code === "EAGAIN" || e.code === "EINTR") continue;
      throw e;
    }
    // The host is gone: nothing will answer, and nothing else is left to do.
    if (n === 0) exit(0);
    const read = BufferFrom(bufSubarray(syncChunk, 0, n));
    syncPending = syncPending.length === 0 ? read : BufferConcat([syncPending, read]);
  }
}

/** Calls in progress by run id, in start order (innermost last). */
const runs = new Map();
function innermost() {
  let last;
  for (const r of runs.values()) last = r;
  return last;
}
// A promise made in a call's context belongs to that call; any other to the innermost call. (Its
// prototype says whose it is: asking the call's `Promise` would run what the call put there.)
function ownerOf(promise) {
  const proto = getPrototypeOf(promise);
  for (const r of runs.values()) if (proto === r.api.PromisePrototype) return r;
  return innermost();
}
process.on("unhandledRejection", (reason, promise) => {
  const r = ownerOf(promise);
  r?.unhandled.set(promise, toCall(r, reason));
});
process.on("rejectionHandled", (promise) => {
  for (const r of runs.values()) r.unhandled.delete(promise);
});
// A throw outside the handler's promise chain fails the innermost call, not the worker and every
// call it serves.
process.on("uncaughtException", (e) => {
  const r = innermost();
  if (r) r.abort(e);
  else writeText(2, `${e && e.stack ? e.stack : String(e)}\n`);
});

// -- A call's output: its console lines and its own writes, a line each, capped.

/** Sends a line of run `r`'s output unless its cap is reached (then counts it as dropped). */
function output(r, level, text) {
  const out = r.out;
  if (out.lines >= MAX_OUTPUT_LINES || out.chars + text.length > MAX_OUTPUT_CHARS) {
    out.dropped++;
    return;
  }
  out.lines++;
  out.chars += text.length;
  writeText(2, stringify({ console: level, text, run: r.id }) + "\n");
}

/** A call's write to its stdout (1) or stderr (2): whole lines go out, the rest waits for more. */
function rawWrite(r, fd, text) {
  const level = fd === 1 ? "log" : "error";
  let pending = r.out.partial[fd] + text;
  let from = 0;
  let nl;
  while ((nl = pending.indexOf("\n", from)) >= 0) {
    if (!r.out.cut[fd]) output(r, level, pending.slice(from, nl));
    r.out.cut[fd] = false;
    from = nl + 1;
  }
  pending = pending.slice(from);
  if (pending.length > MAX_RAW_LINE) {
    if (!r.out.cut[fd]) output(r, level, `${pending.slice(0, MAX_RAW_LINE)}… [cut: a line longer than ${MAX_RAW_LINE >> 10} KiB]`);
    r.out.cut[fd] = true;
    pending = "";
  }
  r.out.partial[fd] = pending;
}

/** At a call's end: its unfinished lines, and what was dropped. */
function flushOutput(r) {
  for (const fd of [1, 2]) {
    if (r.out.partial[fd] !== "" && !r.out.cut[fd]) output(r, fd === 1 ? "log" : "error", r.out.partial[fd]);
    r.out.partial[fd] = "";
  }
  if (r.out.dropped > 0) {
    const note = `[output: more than ${MAX_OUTPUT_LINES} lines or ${MAX_OUTPUT_CHARS >> 20} MiB in one call; ${r.out.dropped} more lines dropped]`;
    writeText(2, stringify({ console: "warn", text: note, run: r.id }) + "\n");
    r.out.dropped = 0;
  }
}

// -- Runs.

function newRun(id) {
  const r = {
    id,
    ended: false,
    modules: new Map(),
    unhandled: new Map(),
    outstanding: 0,
    replied: undefined,
    timers: new Map(),
    decoders: new Map(),
    out: { lines: 0, chars: 0, dropped: 0, partial: ["", "", ""], cut: [false, false, false] },
  };
  r.aborted = new Promise((_, reject) => {
    r.abort = reject;
  });
  r.aborted.catch(() => {});
  // A global object with nothing behind it: a context made from an object of this realm would let
  // `this.constructor` reach this realm's `Function`.
  r.context = vm.createContext(Object.create(null));
  const host = makeHost(r, { request, requestSync, output, rawWrite, flushOutput });
  r.api = realm.runInContext(r.context)(host);
  runs.set(id, r);
  return r;
}

function endRun(r) {
  runs.delete(r.id);
  r.ended = true;
  for (const t of r.timers.values()) t.clear();
  r.timers.clear();
  r.decoders.clear();
  flushOutput(r);
}

/** Whether `v` is an object of this realm (a call's objects are not `instanceof` this `Object`). */
const ours = (v) => v !== null && (typeof v === "object" || typeof v === "function") && v instanceof Object;

/** A failure of this realm made the call's own before it reaches the call (a dynamic import's). */
function toCall(r, e) {
  if (!ours(e)) return e;
  return types.isNativeError(e)
    ? r.api.makeError(typeof e.name === "string" ? e.name : "Error", String(e.message), typeof e.code === "string" ? e.code : undefined)
    : r.api.makeError("Error", String(e));
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
  const module = decodeURIComponent(url.slice(rootUrl.length));
  const line = await new Promise((done) => request(r, { action: "load_module", module }, done));
  const reply = parse(line);
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
          try {
            const m = await moduleAt(r, resolve(specifier, referrer.identifier));
            await ready(r, m);
            return m;
          } catch (e) {
            throw toCall(r, e);
          }
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

/** Waits until no request of `r` awaits its reply, then until Node has reported its rejections. */
async function settleInflight(r) {
  while (r.outstanding > 0) await new Promise((done) => (r.replied = done));
  // Node reports unhandled rejections once the microtask queue drains.
  await new Promise((done) => setImmediate(done));
}

async function outcomeOf(r, { module, name, line }) {
  // The SDK and the console glue first, so the tool's imports find them made; `ctx` (and the
  // global `fetch`, which is `ctx.fetch`) before the tool's module runs.
  const sdk = await ready(r, await moduleAt(r, sdkUrl));
  const { formatLine, LEVELS } = await ready(r, await moduleAt(r, consoleUrl));
  r.api.setConsole(formatLine, LEVELS);
  const ctx = r.api.makeContext(sdk);
  const exports = await Promise.race([ready(r, await moduleAt(r, pathToFileURL(path.join(root, module)).href)), r.aborted]);
  // The original's `.js` tools export a plain `function name(args, ctx)`, described by a `.yaml`.
  const tool = typeof exports[name] === "function" ? { handler: exports[name] } : exports[name];
  if (tool === null || typeof tool !== "object" || (tool.__trailblazeTool !== true && typeof exports[name] !== "function")) {
    return { ok: false, error: { plain: `${module} does not export \`${name}\` as \`export const ${name} = trailblaze.tool(...)\`` } };
  }
  const value = await Promise.race([tool.handler(r.api.parseArgs(line), ctx), r.aborted]);
  await Promise.race([settleInflight(r), r.aborted]);
  const [first] = r.unhandled.values();
  return r.unhandled.size > 0
    ? { ok: false, error: { unawaited: { tool: r.api.toolOf(sdk, first), ...describe(first) } } }
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
    line = stringify({ ...outcome, result: r.id });
    if (tooLong(line)) line = stringify({ ok: false, error: { plain: `its result is ${TOO_LONG}` }, result: r.id });
  } catch (e) {
    line = stringify({ ok: false, error: { plain: `its result: ${e.message}` }, result: r.id });
  }
  writeText(2, stringify({ fence: r.id }) + "\n");
  sendLine(line);
}

inbox.on("message", (msg) => {
  if (msg.eof) exit(0);
  else if (typeof msg.call === "number") serve(msg);
  else if (typeof msg.reply === "number") {
    const w = waiting.get(msg.reply);
    waiting.delete(msg.reply);
    if (w === undefined) return;
    const { r, onReply } = w;
    r.outstanding--;
    r.replied?.();
    // A reply that comes after its call ended (it was aborted) has no one to go to.
    if (r.ended) return;
    try {
      onReply(msg.line);
    } catch (e) {
      r.abort(e);
    }
  }
});
