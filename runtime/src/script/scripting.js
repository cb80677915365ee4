// The `@trailblaze/scripting` module the host provides to scripts in QuickJS. It mirrors the npm
// package in sdk-ts/ (same `trailblaze.tool` shape, same error classes); keep the two in step.
// The raw bindings are captured here and removed from the global object, so scripts reach the host
// only through `ctx`.
const callTool = globalThis.__trailblazeTool;
const callHost = globalThis.__trailblazeHost;
delete globalThis.__trailblazeTool;
delete globalThis.__trailblazeHost;

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

function unwrap(envelope, ErrorClass) {
  if (envelope.ok) return envelope.value;
  throw new ErrorClass(envelope.error);
}

// A namespace whose every property is a function calling `binding(name, ...)`; `then` is left out so
// a stray `await ctx.tools` does not call a tool named "then".
function namespace(make) {
  return new Proxy(Object.freeze({}), {
    get(_, name) {
      return typeof name === "string" && name !== "then" ? make(name) : undefined;
    },
  });
}

// The `ctx` a handler receives at `depth`: its calls run one level deeper.
function makeContext(depth) {
  const next = depth + 1;
  return Object.freeze({
    depth,
    tools: namespace((name) => async (args) => unwrap(callTool(name, args ?? {}, next), TrailblazeToolError)),
    host: namespace((name) => (args) => unwrap(callHost(name, args ?? {}, next), TrailblazeHostError)),
  });
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
