// @trailblaze/scripting: what a scripted tool imports.
//
// This file is both the type surface authors compile against and the runtime module the host
// serves under the name "@trailblaze/scripting". It is kept to erasable TypeScript
// (`erasableSyntaxOnly`, `verbatimModuleSyntax`) so any type stripper (swc, Node) turns it into
// plain ES2022 with no imports: the selector re-export below is type-only and disappears.

export type {
  AndroidAccessibilityMatch,
  AndroidMaestroMatch,
  TrailblazeNodeSelector,
  WebMatch,
} from "./selectors.js";

// ---------------------------------------------------------------------------------------------
// The surface maps. Both are empty here; the generated `trailblaze-client.d.ts` of a trailmap
// fills them through module augmentation, one entry per tool / host function:
//   name: { args: {...}; result: ... }
// Interfaces (not type aliases) are required: only interfaces merge across declarations.

/** Every tool a script may call through `ctx.tools`; filled by `trailblaze-client.d.ts`. */
export interface TrailblazeToolMap {}

/** Every host function a script may call through `ctx.host`; filled by `trailblaze-client.d.ts`. */
export interface TrailblazeHostFunctionMap {}

// The entries are unconstrained (an empty interface has no index signature to constrain them),
// so `Map[K]["args"]` would not type-check generically; these pull the fields out instead.
// The `[E]` wrapping stops a union-typed entry from distributing.
type ArgsOf<E> = [E] extends [{ args: infer A }] ? A : never;
type ResultOf<E> = [E] extends [{ result: infer R }] ? R : never;

/** The arguments of tool `K`. */
export type ToolArgs<K extends keyof TrailblazeToolMap> = ArgsOf<TrailblazeToolMap[K]>;
/** The result of tool `K`. */
export type ToolResult<K extends keyof TrailblazeToolMap> = ResultOf<TrailblazeToolMap[K]>;
/** The arguments of host function `K`. */
export type HostArgs<K extends keyof TrailblazeHostFunctionMap> = ArgsOf<TrailblazeHostFunctionMap[K]>;
/** The result of host function `K`. */
export type HostResult<K extends keyof TrailblazeHostFunctionMap> = ResultOf<TrailblazeHostFunctionMap[K]>;

/** `ctx.tools`: each call is a step, dispatched like any other; failures reject with `TrailblazeToolError`. */
export type TrailblazeTools = {
  readonly [K in keyof TrailblazeToolMap]: (args: ToolArgs<K>) => Promise<ToolResult<K>>;
};

/**
 * `ctx.host`: Rust helpers, called synchronously (no `await`); failures throw
 * `TrailblazeHostError`. Host calls are not tools: no step, no recording, no snapshot change.
 */
export type TrailblazeHost = {
  readonly [K in keyof TrailblazeHostFunctionMap]: (args: HostArgs<K>) => HostResult<K>;
};

/**
 * The second argument of every handler. Deliberately only the two namespaces: every extra
 * member is a promise both the embedded engine and the Node subprocess runtime must keep.
 */
export interface ToolContext {
  /** The tools of this trailmap and its dependencies, built-ins included. */
  readonly tools: TrailblazeTools;
  /** The host functions registered for this trailmap and its dependencies. */
  readonly host: TrailblazeHost;
}

// ---------------------------------------------------------------------------------------------
// Declaring a tool.

/** Optional descriptor fields; a sibling `<name>.tool.yaml` may set them too. */
export interface ToolSpec {
  /** Shown to the LLM; defaults to the export's doc comment. */
  description?: string;
  /** Offer the tool to the LLM, MCP clients and `trailblaze tool` (default true). */
  surfaceToLlm?: boolean;
  /** Put the tool's calls into recordings (default true). */
  isRecordable?: boolean;
  /** Calling the tool keeps the cached snapshot (default false). */
  readOnly?: boolean;
}

/** The body of a scripted tool. */
export type ToolHandler<I, O> = (input: I, ctx: ToolContext) => Promise<O> | O;

/**
 * What `trailblaze.tool` returns and a tool module exports. The host recognises an export by
 * `__trailblazeTool === true`; this exact plain-object shape is the contract with the host.
 */
export interface ScriptedTool<I, O> {
  readonly __trailblazeTool: true;
  readonly spec: ToolSpec;
  readonly handler: ToolHandler<I, O>;
}

/**
 * Declares a scripted tool. `I` is read from the source by the host's analyzer to build the
 * input schema, so spell it out as a type literal or a named type in the same file.
 */
function tool<I, O>(spec: ToolSpec, handler: ToolHandler<I, O>): ScriptedTool<I, O>;
function tool<I, O>(handler: ToolHandler<I, O>): ScriptedTool<I, O>;
function tool<I, O>(
  specOrHandler: ToolSpec | ToolHandler<I, O>,
  handler?: ToolHandler<I, O>,
): ScriptedTool<I, O> {
  if (typeof specOrHandler === "function") {
    return { __trailblazeTool: true, spec: {}, handler: specOrHandler };
  }
  if (typeof handler !== "function") {
    throw new TypeError("trailblaze.tool(spec, handler): handler must be a function");
  }
  return { __trailblazeTool: true, spec: specOrHandler ?? {}, handler };
}

/** The SDK's entry point: `import { trailblaze } from "@trailblaze/scripting"`. */
export const trailblaze = { tool };
export default trailblaze;

// ---------------------------------------------------------------------------------------------
// Errors. Messages are the host's text verbatim: the host already names the tool and never
// quotes argument values, and re-wording here would make logs and scripts disagree.

/** Thrown by `ctx.host.<name>()` when the host function fails. */
export class TrailblazeHostError extends Error {
  /** The host function that failed. */
  readonly hostFunction: string;
  constructor(message: string, hostFunction: string) {
    super(message);
    this.name = "TrailblazeHostError";
    this.hostFunction = hostFunction;
  }
}

/** The rejection of `ctx.tools.<name>()` when the tool call fails. */
export class TrailblazeToolError extends Error {
  /** The tool that failed. */
  readonly tool: string;
  constructor(message: string, tool: string) {
    super(message);
    this.name = "TrailblazeToolError";
    this.tool = tool;
  }
}

// ---------------------------------------------------------------------------------------------
// Building `ctx` from the host's raw bindings, shared by the embedded engine and the Node
// subprocess runtime so both behave identically.

/** A binding's reply. */
export type Envelope = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The host's raw bindings. A reply may be the envelope itself or its JSON text, so a binding
 * that hands JSON across the native boundary (`__trailblazeHost(name, argsJson)`) can be passed
 * through without a wrapper parsing it first.
 */
export interface ContextBindings {
  /** Dispatch a tool; may reply synchronously or with a promise (the subprocess runtime's HTTP callback). */
  callTool(name: string, args: unknown): Envelope | string | PromiseLike<Envelope | string>;
  /** Call a host function; must reply synchronously, since `ctx.host` is synchronous. */
  callHost(name: string, args: unknown): Envelope | string;
}

type ErrorClass = new (message: string, name: string) => Error;

function unwrap(reply: Envelope | string, name: string, Err: ErrorClass): unknown {
  const envelope: unknown = typeof reply === "string" ? JSON.parse(reply) : reply;
  if (typeof envelope === "object" && envelope !== null && (envelope as { ok?: unknown }).ok === true) {
    return (envelope as { value?: unknown }).value;
  }
  const error = typeof envelope === "object" && envelope !== null ? (envelope as { error?: unknown }).error : undefined;
  throw new Err(typeof error === "string" ? error : `malformed reply from the host for ${name}`, name);
}

// A Proxy answers any property name, so things the language itself probes must not become
// calls: `then` (awaiting or returning the namespace would dispatch a tool named "then"),
// `toJSON` (JSON.stringify), symbols and Object.prototype members (String(), inspection).
function isProbe(key: string | symbol): key is symbol {
  return typeof key !== "string" || key === "then" || key === "toJSON" || key in Object.prototype;
}

function namespace(call: (name: string, args: unknown) => unknown): object {
  return new Proxy(
    {},
    {
      get(target, key) {
        if (isProbe(key)) return Reflect.get(target, key);
        // A missing argument is sent as {} so a tool with only optional fields can be called bare.
        return (args?: unknown) => call(key, args === undefined ? {} : args);
      },
    },
  );
}

/** Builds the `ctx` handed to a handler from the host's two raw bindings. */
export function makeContext(bindings: ContextBindings): ToolContext {
  const tools = namespace(async (name, args) =>
    unwrap(await bindings.callTool(name, args), name, TrailblazeToolError),
  );
  const host = namespace((name, args) => unwrap(bindings.callHost(name, args), name, TrailblazeHostError));
  return { tools: tools as TrailblazeTools, host: host as TrailblazeHost };
}
