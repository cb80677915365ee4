// The globals of one call of the trailblaze Node worker, made inside that call's own `vm` context
// (this script runs there before any of the call's modules). Everything a tool can reach is made
// here, from this context's own intrinsics, so every global, prototype and function a call sees is
// its own and is gone with it: `process`, `console`, timers, `Buffer`, `URL`, `TextEncoder`,
// `AbortController`, `fetch`, `performance`, `structuredClone`, ... No object of the runner's realm
// is ever handed to the call: the runner's functions (`host`) are kept in this script's closures,
// take and return only primitives (strings, numbers, booleans, bigints, this context's own typed
// arrays and callbacks), and report a failure as `host.FAIL` rather than by throwing their own
// errors. (An object of the runner's realm would give a tool the runner's `Function`, hence
// everything the runner holds: its pipes, its other calls.)
//
// Evaluates to `install(host)`, which defines the globals (most of them made on first use) and
// returns the runner's handle on this call (`api`, a null-prototype object the tool never sees).
(function install(host) {
  "use strict";
  const FAIL = host.FAIL;
  const { defineProperty, freeze, create, keys } = Object;
  const { parse } = JSON;
  const g = globalThis;
  const api = create(null);

  /** A data property of the global, as Node's own globals are (writable, not enumerable). */
  const put = (name, value) =>
    defineProperty(g, name, { value, writable: true, configurable: true, enumerable: false });
  /** A global made when first read (a call that never uses `URL` does not pay for it). */
  const lazy = (name, build) =>
    defineProperty(g, name, {
      configurable: true,
      enumerable: false,
      get() {
        const value = build();
        put(name, value);
        return value;
      },
      set(value) {
        put(name, value);
      },
    });
  api.put = put;
  api.lazy = lazy;

  // -- Errors: the runner's failures become this context's errors, with their name, message and code.
  const ERRORS = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
  const makeError = (name, message, code) => {
    const Ctor = ERRORS[name];
    const e = Ctor !== undefined ? new Ctor(message) : api.DOMException !== undefined ? new api.DOMException(message, name) : new Error(message);
    if (code) defineProperty(e, "code", { value: code, writable: true, configurable: true, enumerable: false });
    return e;
  };
  /** Throws the runner's last failure as this context's error. */
  const rethrow = () => {
    const [name, code, ...message] = `${host.lastError()}`.split("\n");
    throw makeError(name, message.join("\n"), code);
  };
  /** `value`, or the runner's failure thrown. */
  const check = (value) => (value === FAIL ? rethrow() : value);
  api.check = check;
  api.makeError = makeError;
  api.PromisePrototype = Promise.prototype;
  api.parseArgs = (line) => parse(line).args;
  /** The tool an unawaited failure names (a failed `ctx.tools` call's), if any. */
  api.toolOf = (sdk, reason) => (reason instanceof sdk.TrailblazeToolError ? reason.tool : null);

  const info = parse(host.info);

  // -- The SDK's bindings: requests to the host, replies parsed here (their values are this realm's).
  api.makeContext = (sdk) => {
    const { unwrapEnvelope, makeContext } = sdk;
    const ask = (action, name, args) =>
      new Promise((resolve, reject) => {
        const sent = host.request(action, name, args, (line) => {
          try {
            resolve(unwrapEnvelope(line, name ?? action));
          } catch (e) {
            reject(e);
          }
        });
        if (sent === FAIL) {
          try {
            rethrow();
          } catch (e) {
            reject(e);
          }
        }
      });
    const ctx = makeContext({
      callTool: (name, args) => ask("call_tool", `${name}`, args),
      callHost: (name, args) => unwrapEnvelope(check(host.requestSync("call_host", `${name}`, args)), name),
      fetch: (request) => ask("fetch", undefined, request),
    });
    // Node's own `fetch` would reach any address with none of `network`'s rules: the global is the
    // call's `ctx.fetch`, as in the embedded engine.
    put("fetch", ctx.fetch);
    return ctx;
  };

  // -- console: one line per call, formatted by the host's glue (console.mjs), sent with this call's id.
  api.setConsole = (formatLine, levels) => {
    const console = {};
    for (const level of levels) console[level] = (...a) => void host.console(level, formatLine(a));
    put("console", console);
  };

  // -- Timers: the runner keeps this call's, and clears those left when it ends.
  // The class of what setTimeout returns, made on first use.
  let Timer;
  const timerClass = () =>
    (Timer ??= class Timeout {
      #id;
      constructor(id) {
        this.#id = id;
      }
      static idOf(t) {
        return typeof t === "object" && t !== null && #id in t ? t.#id : typeof t === "number" || typeof t === "string" ? +t : undefined;
      }
      ref() {
        host.timerRef(this.#id, true);
        return this;
      }
      unref() {
        host.timerRef(this.#id, false);
        return this;
      }
      hasRef() {
        return host.timerHasRef(this.#id);
      }
      refresh() {
        host.timerRefresh(this.#id);
        return this;
      }
      close() {
        host.timerClear(this.#id);
        return this;
      }
      [Symbol.toPrimitive]() {
        return this.#id;
      }
    });
  const callable = (fn, what) => {
    if (typeof fn !== "function") {
      throw makeError("TypeError", `The "${what}" argument must be of type function. Received ${fn === null ? "null" : typeof fn}`, "ERR_INVALID_ARG_TYPE");
    }
  };
  const timer = (kind) =>
    function (fn, ms, ...args) {
      callable(fn, "callback");
      return new (timerClass())(check(host.timerSet(kind, () => fn(...args), kind === 2 ? 0 : +ms)));
    };
  const clear = (t) => {
    const id = Timer !== undefined ? Timer.idOf(t) : typeof t === "number" || typeof t === "string" ? +t : undefined;
    if (id !== undefined) host.timerClear(id);
  };
  put("setTimeout", timer(0));
  put("setInterval", timer(1));
  put("setImmediate", timer(2));
  put("clearTimeout", clear);
  put("clearInterval", clear);
  put("clearImmediate", clear);
  put("queueMicrotask", (fn) => {
    callable(fn, "callback");
    host.microtask(() => fn());
  });

  // -- process: this call's own copy of what a tool may know of its process and do with it.
  lazy("process", () => {
    const out = (fd) => ({
      fd,
      isTTY: false,
      writable: true,
      write(chunk, encoding, done) {
        if (typeof encoding === "function") done = encoding;
        const text = typeof chunk === "string" ? chunk : ArrayBuffer.isView(chunk) ? new g.TextDecoder().decode(chunk) : undefined;
        if (text === undefined) {
          throw makeError("TypeError", 'The "chunk" argument must be of type string or an instance of Buffer or Uint8Array', "ERR_INVALID_ARG_TYPE");
        }
        host.write(fd, text);
        if (typeof done === "function") host.nextTick(() => done());
        return true;
      },
      end(chunk, encoding, done) {
        if (chunk !== undefined && chunk !== null && typeof chunk !== "function") this.write(chunk, encoding);
        return this;
      },
      on() {
        return this;
      },
      once() {
        return this;
      },
      off() {
        return this;
      },
    });
    const listeners = new Map();
    const process = {
      env: { ...info.env },
      argv: [...info.argv],
      argv0: info.argv0,
      execArgv: [],
      execPath: info.execPath,
      pid: info.pid,
      ppid: info.ppid,
      platform: info.platform,
      arch: info.arch,
      version: info.version,
      versions: freeze({ ...info.versions }),
      release: freeze({ ...info.release }),
      title: info.title,
      exitCode: undefined,
      stdout: out(1),
      stderr: out(2),
      cwd: () => check(host.cwd()),
      uptime: () => host.uptime(),
      memoryUsage: () => parse(host.memoryUsage()),
      getuid: () => info.uid,
      geteuid: () => info.euid,
      getgid: () => info.gid,
      getegid: () => info.egid,
      exit(code) {
        host.exit(code === undefined ? process.exitCode : code);
      },
      kill(pid, signal) {
        return check(host.kill(pid, signal === undefined ? "SIGTERM" : signal));
      },
      nextTick(fn, ...args) {
        callable(fn, "callback");
        host.nextTick(() => fn(...args));
      },
      emitWarning(warning, type) {
        const text = typeof warning === "string" ? warning : `${warning?.message ?? warning}`;
        host.write(2, `(node:${info.pid}) ${typeof type === "string" ? type : warning?.name ?? "Warning"}: ${text}\n`);
      },
      // Listeners are kept, but the process's events are the runner's and never reach a call.
      on(event, fn) {
        (listeners.get(event) ?? listeners.set(event, []).get(event)).push(fn);
        return this;
      },
      off(event, fn) {
        const list = listeners.get(event) ?? [];
        const i = list.lastIndexOf(fn);
        if (i >= 0) list.splice(i, 1);
        return this;
      },
      removeAllListeners(event) {
        if (event === undefined) listeners.clear();
        else listeners.delete(event);
        return this;
      },
      listeners: (event) => [...(listeners.get(event) ?? [])],
      listenerCount: (event) => (listeners.get(event) ?? []).length,
      emit(event, ...args) {
        const list = [...(listeners.get(event) ?? [])];
        for (const fn of list) fn.apply(process, args);
        return list.length > 0;
      },
    };
    process.once = process.on;
    process.addListener = process.on;
    process.removeListener = process.off;
    const hrtime = (previous) => {
      const now = host.hrtime();
      let s = Number(now / 1000000000n);
      let ns = Number(now % 1000000000n);
      if (Array.isArray(previous)) {
        s -= previous[0];
        ns -= previous[1];
        if (ns < 0) {
          s -= 1;
          ns += 1e9;
        }
      }
      return [s, ns];
    };
    hrtime.bigint = () => host.hrtime();
    process.hrtime = hrtime;
    defineProperty(process, Symbol.toStringTag, { value: "process" });
    return process;
  });

  lazy("performance", () => {
    const timeOrigin = info.timeOrigin;
    return {
      timeOrigin,
      now: () => host.now(),
      toJSON() {
        return { timeOrigin, now: host.now() };
      },
    };
  });

  put("atob", function atob(data) {
    if (arguments.length === 0) throw makeError("TypeError", 'The "data" argument must be specified', "ERR_MISSING_ARGS");
    return check(host.atob(`${data}`));
  });
  put("btoa", function btoa(data) {
    if (arguments.length === 0) throw makeError("TypeError", 'The "data" argument must be specified', "ERR_MISSING_ARGS");
    return check(host.btoa(`${data}`));
  });

  lazy("structuredClone", () => {
    const cannot = (v) => new api.DOMException(`${typeof v === "function" ? v : "#<Object>"} could not be cloned.`, "DataCloneError");
    const brand = (v, method) => {
      try {
        method.call(v);
        return true;
      } catch {
        return false;
      }
    };
    const { getTime } = Date.prototype;
    const mapHas = Map.prototype.has;
    const setHas = Set.prototype.has;
    const bufferSlice = ArrayBuffer.prototype.slice;
    const errorKinds = { EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
    const plainKeys = (from, to, clone) => {
      for (const key of keys(from)) to[key] = clone(from[key]);
      return to;
    };
    return function structuredClone(value) {
      if (arguments.length === 0) throw makeError("TypeError", 'The "value" argument must be specified', "ERR_MISSING_ARGS");
      const seen = new Map();
      const clone = (v) => {
        if (typeof v === "symbol" || typeof v === "function") throw cannot(v);
        if (v === null || typeof v !== "object") return v;
        if (seen.has(v)) return seen.get(v);
        const keep = (copy) => (seen.set(v, copy), copy);
        if (Array.isArray(v)) {
          const copy = keep(new Array(v.length));
          return plainKeys(v, copy, clone);
        }
        if (brand(v, getTime)) return keep(new Date(getTime.call(v)));
        if (v instanceof RegExp) return keep(new RegExp(v.source, v.flags));
        if (brand(v, Boolean.prototype.valueOf)) return keep(Object(Boolean.prototype.valueOf.call(v)));
        if (brand(v, Number.prototype.valueOf)) return keep(Object(Number.prototype.valueOf.call(v)));
        if (brand(v, String.prototype.valueOf)) return keep(Object(String.prototype.valueOf.call(v)));
        if (brand(v, BigInt.prototype.valueOf)) return keep(Object(BigInt.prototype.valueOf.call(v)));
        if (ArrayBuffer.isView(v)) {
          const Ctor = v.constructor;
          const buffer = clone(v.buffer);
          const length = v instanceof DataView ? v.byteLength : v.length;
          return keep(new Ctor(buffer, v.byteOffset, length));
        }
        if (v instanceof ArrayBuffer) return keep(bufferSlice.call(v, 0));
        if (v instanceof SharedArrayBuffer) return keep(v);
        if (brand(v, () => mapHas.call(v))) {
          const copy = keep(new Map());
          for (const [k, x] of v) copy.set(clone(k), clone(x));
          return copy;
        }
        if (brand(v, () => setHas.call(v))) {
          const copy = keep(new Set());
          for (const x of v) copy.add(clone(x));
          return copy;
        }
        if (v instanceof Error) {
          const Kind = errorKinds[v.name] ?? Error;
          const copy = keep(new Kind(v.message));
          if (typeof v.stack === "string") copy.stack = v.stack;
          if ("cause" in v) copy.cause = clone(v.cause);
          return copy;
        }
        if (v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || v instanceof WeakRef) throw cannot(v);
        return plainKeys(v, keep({}), clone);
      };
      return clone(value);
    };
  });

  return api;
})
