// The `@trailblaze/scripting` module the host provides to scripts in QuickJS. It mirrors the npm
// package in sdk-ts/ (same `trailblaze.tool` shape, same error classes); keep the two in step.
// The raw bindings are captured here and removed from the global object, so scripts reach the host
// only through `ctx`.
const callTool = globalThis.__trailblazeTool;
const callHost = globalThis.__trailblazeHost;
const toolNames = globalThis.__trailblazeToolNames ?? [];
const hostNames = globalThis.__trailblazeHostNames ?? [];
delete globalThis.__trailblazeTool;
delete globalThis.__trailblazeHost;
delete globalThis.__trailblazeToolNames;
delete globalThis.__trailblazeHostNames;

export class TrailblazeToolError extends Error {
  constructor(message) {
    super(message);
    this.name = "TrailblazeToolError";
  }
}

export class TrailblazeHostError extends Error {
  constructor(message) {
    super(message);
    this.name = "TrailblazeHostError";
  }
}

function tool(specOrHandler, handler) {
  if (typeof specOrHandler === "function") {
    return { __trailblazeTool: true, spec: {}, handler: specOrHandler };
  }
  if (typeof handler !== "function") {
    throw new TypeError("trailblaze.tool(spec, handler): the handler must be a function");
  }
  return { __trailblazeTool: true, spec: specOrHandler ?? {}, handler };
}

export const trailblaze = Object.freeze({ tool });
export default trailblaze;

// A binding returns the call's value, or throws an Error carrying the host's message.
function hostFailure(e, ErrorClass) {
  return new ErrorClass(e instanceof Error ? e.message : String(e));
}

// A namespace: the names the session knows are own properties (a plain property read, which matters
// for a host call in a loop); any other name falls through to a Proxy prototype, so calling it still
// reaches the host and gets its "unknown tool / host function" answer. `then` is left out so a stray
// `await ctx.tools` does not call a tool named "then".
function namespace(make, names) {
  const fallback = new Proxy(Object.create(null), {
    get(_, name) {
      return typeof name === "string" && name !== "then" ? make(name) : undefined;
    },
  });
  const ns = Object.create(fallback);
  for (const name of names) ns[name] = make(name);
  return Object.freeze(ns);
}

// The `ctx` a handler receives at `depth`: its calls run one level deeper. One per depth, reused.
const contexts = new Map();
function makeContext(depth) {
  let ctx = contexts.get(depth);
  if (ctx === undefined) {
    const next = depth + 1;
    ctx = Object.freeze({
      depth,
      tools: namespace(
        (name) => async (args) => {
          try {
            return callTool(name, args ?? {}, next);
          } catch (e) {
            throw hostFailure(e, TrailblazeToolError);
          }
        },
        toolNames,
      ),
      host: namespace(
        (name) => (args) => {
          try {
            return callHost(name, args ?? {}, next);
          } catch (e) {
            throw hostFailure(e, TrailblazeHostError);
          }
        },
        hostNames,
      ),
    });
    contexts.set(depth, ctx);
  }
  return ctx;
}

// Runs a tool's handler for the host. Scripts can see it but not replace it, and the host floors each
// call's depth at its own count, so calling it with a smaller depth does not get around the cap.
Object.defineProperty(globalThis, "__trailblazeRun", {
  value: (t, input, depth) => {
    try {
      return Promise.resolve(t.handler(input, makeContext(depth)));
    } catch (e) {
      return Promise.reject(e);
    }
  },
  writable: false,
  configurable: false,
  enumerable: false,
});
