// The runner's side of a call's globals (realm*.js): the functions one call's context is given.
// Each takes and returns only primitives, the call's own typed arrays (read and written through a
// view of their memory that stays here) and the call's own callbacks (called with no `this` and
// primitive arguments); a failure is returned as `FAIL`, its name, code and message kept for
// `lastError()`, never thrown (an error of this realm would carry this realm's `Function` into the
// call). Once the call has ended they do nothing: a promise it left cannot start a timer or a
// request. Everything of Node's they use is taken here, before any call exists.
import { types } from "node:util";

const FAIL = Symbol("trailblaze: failed");
const SELF = Symbol("trailblaze: the buffer itself");
const { stringify, parse } = JSON;
const { freeze, getOwnPropertyNames, getOwnPropertyDescriptor, getPrototypeOf } = Object;
const { isAnyArrayBuffer, isArrayBufferView } = types;
const NodeBuffer = Buffer;
const { byteLength, isEncoding } = NodeBuffer;
const bufferFrom = NodeBuffer.from;
const NodeURL = URL;
const NodeURLSearchParams = URLSearchParams;
const NodeTextDecoder = TextDecoder;
const encoder = new TextEncoder();
const encodeInto = encoder.encodeInto.bind(encoder);
const { atob: nodeAtob, btoa: nodeBtoa, queueMicrotask: nodeQueueMicrotask } = globalThis;
const { setTimeout: nodeSetTimeout, setInterval: nodeSetInterval, setImmediate: nodeSetImmediate } = globalThis;
const { clearTimeout: nodeClearTimeout, clearInterval: nodeClearInterval, clearImmediate: nodeClearImmediate } = globalThis;
const now = performance.now.bind(performance);
const proc = {
  cwd: process.cwd.bind(process),
  uptime: process.uptime.bind(process),
  memoryUsage: process.memoryUsage.bind(process),
  hrtime: process.hrtime.bigint.bind(process.hrtime),
  kill: process.kill.bind(process),
  exit: process.exit.bind(process),
  nextTick: process.nextTick.bind(process),
};
const reflectApply = Reflect.apply;
const typedArrayProto = getPrototypeOf(Uint8Array.prototype);
const getter = (name) => getOwnPropertyDescriptor(typedArrayProto, name).get;
const [arrayBufferOf, byteOffsetOf, byteLengthOf, tagOf] = ["buffer", "byteOffset", "byteLength", Symbol.toStringTag].map(getter);
const call = (fn, self, ...a) => reflectApply(fn, self, a);

// Node's Buffer methods by name, as they are now (a call's `Buffer.prototype` has one of each).
const BUFFER_METHODS = new Map(
  getOwnPropertyNames(NodeBuffer.prototype)
    .filter((name) => name !== "constructor" && typeof getOwnPropertyDescriptor(NodeBuffer.prototype, name).value === "function")
    .map((name) => [name, NodeBuffer.prototype[name]]),
);
/** The methods a call's `Buffer.prototype` delegates, as class members (see realm-bytes.js). */
export const BUFFER_MEMBERS = [...BUFFER_METHODS.keys()]
  .filter((name) => !["slice", "subarray", "toJSON"].includes(name) && /^[A-Za-z_$][\w$]*$/.test(name))
  .map((name) => `${name}(...a) { return node("${name}", this, a); }`)
  .join("\n      ");
const URL_PARTS = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];
const URL_SETTABLE = new Set(URL_PARTS.slice(2));

// What a call may know of its process, read once (after the runner has removed its own variable).
let info;
function infoText() {
  if (info === undefined) {
    const ids = (name) => (typeof process[name] === "function" ? process[name]() : undefined);
    info = stringify({
      env: { ...process.env },
      argv: [...process.argv],
      argv0: process.argv0,
      execPath: process.execPath,
      pid: process.pid,
      ppid: process.ppid,
      platform: process.platform,
      arch: process.arch,
      version: process.version,
      versions: process.versions,
      release: process.release,
      title: process.title,
      timeOrigin: performance.timeOrigin,
      uid: ids("getuid"),
      euid: ids("geteuid"),
      gid: ids("getgid"),
      egid: ids("getegid"),
    });
  }
  return info;
}

const isPrimitive = (v) => v === null || (typeof v !== "object" && typeof v !== "function");

/** A view here of a call's bytes (any typed array, DataView or ArrayBuffer of its context). */
function bytes(v) {
  if (tagOf.call(v) !== undefined) return bufferFrom(arrayBufferOf.call(v), byteOffsetOf.call(v), byteLengthOf.call(v));
  if (isAnyArrayBuffer(v)) return bufferFrom(v);
  if (isArrayBufferView(v)) return bufferFrom(v.buffer, v.byteOffset, v.byteLength);
  throw new TypeError("expected a Buffer, a typed array or an ArrayBuffer");
}

/** A call's argument as a Node method gets it: a primitive as it is, bytes as a view of them. */
const argument = (v) => (isPrimitive(v) ? v : bytes(v));

let nextTimer = 1;
let nextDecoder = 1;

/**
 * The functions for run `r`. `io` is the runner's: `request`, `requestSync`, `output`, `rawWrite`
 * and `flushOutput`.
 */
export function makeHost(r, io) {
  let last = "Error\n\nunknown";
  const remember = (e) => {
    try {
      const name = e !== null && typeof e === "object" && typeof e.name === "string" ? e.name : "Error";
      const code = e !== null && typeof e === "object" && typeof e.code === "string" ? e.code : "";
      const message = e !== null && typeof e === "object" && typeof e.message === "string" ? e.message : String(e);
      last = `${name}\n${code}\n${message}`;
    } catch {
      last = "Error\n\nfailed";
    }
  };
  /** `fn`, failing as `FAIL` and refusing once the call has ended. */
  const guarded = (fn) =>
    function (...a) {
      try {
        if (r.ended) throw new Error("the call has ended");
        return reflectApply(fn, undefined, a);
      } catch (e) {
        remember(e);
        return FAIL;
      }
    };
  /** Calls a call's callback for a timer or a tick; its throw fails the call. */
  const invoke = (cb) => {
    if (r.ended) return;
    try {
      reflectApply(cb, undefined, []);
    } catch (e) {
      r.abort(e);
    }
  };
  const callback = (cb) => {
    if (typeof cb !== "function") throw new TypeError("expected a function");
    return cb;
  };
  const decoder = (id) => {
    const d = r.decoders.get(id);
    if (d === undefined) throw new TypeError("no such TextDecoder");
    return d;
  };
  const timer = (id) => r.timers.get(+id);
  const functions = {
    lastError: () => last,
    request: (action, name, args, onReply) => io.request(r, name === undefined ? { action, args } : { action, name, args }, callback(onReply)),
    requestSync: (action, name, args) => io.requestSync(r, { action, name, args }),
    console: (level, text) => io.output(r, `${level}`, `${text}`),
    write: (fd, text) => io.rawWrite(r, fd === 1 ? 1 : 2, `${text}`),
    timerSet(kind, cb, ms) {
      callback(cb);
      const id = nextTimer++;
      const [set, clear] = [
        [nodeSetTimeout, nodeClearTimeout],
        [nodeSetInterval, nodeClearInterval],
        [nodeSetImmediate, nodeClearImmediate],
      ][kind];
      const fire = () => {
        if (kind !== 1) r.timers.delete(id);
        invoke(cb);
      };
      const handle = kind === 2 ? set(fire) : set(fire, typeof ms === "number" ? ms : 0);
      r.timers.set(id, { handle, clear: () => clear(handle) });
      return id;
    },
    timerClear(id) {
      const t = timer(id);
      if (t !== undefined) {
        t.clear();
        r.timers.delete(+id);
      }
    },
    timerRef(id, on) {
      const t = timer(id);
      if (on) t?.handle.ref();
      else t?.handle.unref();
    },
    timerHasRef: (id) => timer(id)?.handle.hasRef() ?? false,
    timerRefresh: (id) => void timer(id)?.handle.refresh?.(),
    microtask: (cb) => nodeQueueMicrotask(() => invoke(callback(cb))),
    nextTick: (cb) => proc.nextTick(() => invoke(callback(cb))),
    cwd: () => proc.cwd(),
    hrtime: () => proc.hrtime(),
    now: () => now(),
    uptime: () => proc.uptime(),
    memoryUsage: () => stringify(proc.memoryUsage()),
    exit(code) {
      io.flushOutput(r);
      proc.exit(isPrimitive(code) ? code : undefined);
    },
    kill: (pid, signal) => proc.kill(isPrimitive(pid) ? pid : NaN, isPrimitive(signal) ? signal : undefined),
    byteLength: (s, encoding) => byteLength(`${s}`, `${encoding}`),
    bufWrite: (target, s, offset, length, encoding) => call(BUFFER_METHODS.get("write"), bytes(target), `${s}`, offset, length, `${encoding}`),
    bufCall(name, self, ...a) {
      const method = BUFFER_METHODS.get(`${name}`);
      if (method === undefined) throw new TypeError(`Buffer has no method ${name}`);
      const view = bytes(self);
      let n = a.length;
      while (n > 0 && a[n - 1] === undefined) n--;
      const result = reflectApply(method, view, a.slice(0, n).map(argument));
      if (result === view) return SELF;
      if (isPrimitive(result)) return result;
      throw new TypeError(`Buffer.prototype.${name} returned what a call cannot be given`);
    },
    isEncoding: (encoding) => isEncoding(`${encoding}`),
    atob: (s) => nodeAtob(`${s}`),
    btoa: (s) => nodeBtoa(`${s}`),
    encodeInto(s, target) {
      const { read, written } = encodeInto(`${s}`, bytes(target));
      return `${read},${written}`;
    },
    decoder(label, fatal, ignoreBOM) {
      const id = nextDecoder++;
      r.decoders.set(id, new NodeTextDecoder(`${label}`, { fatal: !!fatal, ignoreBOM: !!ignoreBOM }));
      return id;
    },
    decoderEncoding: (id) => decoder(id).encoding,
    decode: (id, input, stream) => decoder(id).decode(input === undefined ? undefined : bytes(input), { stream: !!stream }),
    url(input, base, hasBase) {
      const u = hasBase ? new NodeURL(`${input}`, `${base}`) : new NodeURL(`${input}`);
      return stringify(URL_PARTS.map((p) => u[p]));
    },
    urlSet(href, key, value) {
      if (!URL_SETTABLE.has(key)) throw new TypeError(`${key} cannot be set`);
      const u = new NodeURL(`${href}`);
      u[key] = `${value}`;
      return stringify(URL_PARTS.map((p) => u[p]));
    },
    searchParse: (query) => stringify([...new NodeURLSearchParams(`${query}`)]),
    searchSerialize: (pairs) => new NodeURLSearchParams(parse(`${pairs}`)).toString(),
  };
  const host = { FAIL, SELF, info: infoText() };
  for (const [name, fn] of Object.entries(functions)) host[name] = name === "lastError" ? fn : guarded(fn);
  return freeze(host);
}
