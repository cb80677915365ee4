// Host glue, not SDK: builds the one `ctx` from the raw bindings with the SDK's own `makeContext`
// (sdk-ts/src/index.ts), installs `console`, hides the bindings so scripts reach the host only
// through `ctx`, then names what the host locks: every tool of a session shares this realm, so
// nothing one tool changes in what they share (intrinsics, globals, the SDK, `ctx`) may change
// another's.
import * as sdk from "@trailblaze/scripting";
import { formatLine, LEVELS } from "trailblaze:console";

const bindings = globalThis.__trailblazeBindings;
delete globalThis.__trailblazeBindings;
const ctx = sdk.makeContext(bindings);
const print = bindings.console;

// Captured now: a script that replaces `Promise.resolve` later must not rewrite other tools' results.
const resolve = Promise.resolve.bind(Promise);
const reject = Promise.reject.bind(Promise);

const console = {};
for (const level of LEVELS) {
  console[level] = (...args) => {
    print(level, formatLine(args));
  };
}
Object.defineProperty(globalThis, "console", { value: console, writable: false, enumerable: false, configurable: false });

// The global `fetch` is `ctx.fetch`: the host makes the exchange, under the trailmap's `network` rules.
const fetch = ctx.fetch;
Object.defineProperty(globalThis, "fetch", {
  value: (input, init) => fetch(input, init),
  writable: false,
  enumerable: false,
  configurable: false,
});

// Runs a tool's handler for the host. Scripts can see it but not replace it; calling it gains a
// script nothing, since the host keeps the call depth itself.
Object.defineProperty(globalThis, "__trailblazeRun", {
  value: (t, input) => {
    try {
      return resolve(t.handler(input, ctx));
    } catch (e) {
      return reject(e);
    }
  },
  writable: false,
  configurable: false,
  enumerable: false,
});

// The original's `script` tool: its source is a function body that may call
// `trailblaze.execute(name, params)` synchronously (the answer is `{ isError, message }`, never a
// throw) and returns YAML of further tool calls. The host hands the compiled body here.
const callTool = bindings.callTool;
const stringify = JSON.stringify;
Object.defineProperty(globalThis, "__trailblazeInline", {
  value: (body, input) => {
    const trailblaze = Object.freeze({
      execute(name, params) {
        try {
          const r = callTool(String(name), params === undefined ? {} : params);
          return { isError: false, message: typeof r === "string" ? r : stringify(r) };
        } catch (e) {
          return { isError: true, message: String(e !== null && typeof e === "object" && "message" in e ? e.message : e) };
        }
      },
    });
    return body(input, trailblaze);
  },
  writable: false,
  configurable: false,
  enumerable: false,
});

const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf } = Object;
const { ownKeys } = Reflect;
const ReadOnly = TypeError;

// The "override mistake": once a prototype's property is frozen, plain assignment of the same name
// on an object that inherits it throws (`this.name = "E"` in an Error subclass, `obj.toString = f`).
// As SES's moderate taming does, the common ones become accessors whose setter defines an own
// property on the receiver, and refuses only when the receiver is the shared prototype itself.
function tame(proto, name) {
  const d = getOwnPropertyDescriptor(proto, name);
  if (d === undefined || !("value" in d) || !d.writable || !d.configurable) return;
  const value = d.value;
  defineProperty(proto, name, {
    get() {
      return value;
    },
    set(v) {
      if (this === proto) {
        throw new ReadOnly(`Cannot assign to read only property '${String(name)}' of a shared prototype`);
      }
      defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
    },
    enumerable: d.enumerable,
    configurable: false,
  });
}

const common = ["constructor", "name", "message", "toString", "valueOf", "toJSON", "toLocaleString"];
const errors = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, globalThis.AggregateError];
for (const proto of [Object.prototype, Function.prototype, Array.prototype, Promise.prototype, ...errors.filter(Boolean).map((E) => E.prototype)]) {
  for (const name of common) tame(proto, name);
}
for (const name of ["hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable"]) tame(Object.prototype, name);

// Intrinsics no global names: reached through instances.
const hidden = [
  async function () {},
  function* () {},
  async function* () {},
  [][Symbol.iterator](),
  new Map().entries(),
  new Set().values(),
  ""[Symbol.iterator](),
  /x/[Symbol.matchAll](""),
].map(getPrototypeOf);
if (typeof Int8Array === "function") hidden.push(getPrototypeOf(Int8Array));

// What the host freezes once this module has run (`harden.rs`): everything reachable from these.
// A module namespace cannot be frozen (its bindings stay live), but its exports can.
export const roots = [globalThis, ...hidden, ctx, ...ownKeys(sdk).map((k) => sdk[k])];
