// @trailblaze/scripting: what a scripted tool imports.
//
// This file is both the type surface authors compile against and the runtime module the host
// serves under the name "@trailblaze/scripting". It is kept to erasable TypeScript
// (`erasableSyntaxOnly`, `verbatimModuleSyntax`) so any type stripper (swc, Node) turns it into
// plain ES2022 with no imports: the selector re-export below is type-only and disappears.

import type {
  AndroidAccessibilityMatch,
  AndroidMaestroMatch,
  ComposeMatch,
  IosAxeMatch,
  IosMaestroMatch,
  TrailblazeNodeSelector,
  WebMatch,
} from "./selectors.js";
export type {
  AndroidAccessibilityMatch,
  AndroidMaestroMatch,
  ComposeMatch,
  IosAxeMatch,
  IosMaestroMatch,
  TrailblazeNodeSelector,
  WebMatch,
};

// ---------------------------------------------------------------------------------------------
// The one global both runtimes give a script beyond ES2022's: `console`, with the levels the host
// prints (to stderr and the session log, secrets scrubbed). Declared here rather than by the DOM or
// Node typings, which would type `document` or `process` that a tool does not have; as members of
// the global `Console` interface, so a project that loads either of those as well merges with them.
declare global {
  interface Console {
    log(...data: unknown[]): void;
    info(...data: unknown[]): void;
    warn(...data: unknown[]): void;
    error(...data: unknown[]): void;
    debug(...data: unknown[]): void;
  }
  var console: Console;
}

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
 * The second argument of every handler. Deliberately small: every member is a promise both the
 * embedded engine and the Node subprocess runtime must keep.
 */
export interface ToolContext {
  /** The tools of this trailmap and its dependencies, built-ins included. */
  readonly tools: TrailblazeTools;
  /** The host functions registered for this trailmap and its dependencies. */
  readonly host: TrailblazeHost;
  /**
   * An HTTP request made by the host: only origins the trailmap's `network.allow` lists are
   * reached (anything else is refused before connecting); `{{secret:NAME}}` in header values and
   * the body is resolved by the host; the response is capped in size and time; redirects are
   * returned, not followed. Failures reject with `TrailblazeHostError` (`hostFunction: "fetch"`).
   */
  readonly fetch: (input: string | { readonly url: string } | { toString(): string }, init?: FetchInit) => Promise<FetchResponse>;
}

/** The parts of the standard `RequestInit` that `ctx.fetch` honours. */
export interface FetchInit {
  /** `GET` (the default), `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE` or `OPTIONS`. */
  method?: string;
  /** Header values may hold `{{secret:NAME}}` placeholders, resolved by the host. */
  headers?:
    | Readonly<Record<string, string>>
    | ReadonlyArray<readonly [string, string]>
    | { forEach(callback: (value: string, name: string) => void): void };
  /** Text (`JSON.stringify` an object first); may hold `{{secret:NAME}}` placeholders. */
  body?: string | null;
}

/** The headers of a {@link FetchResponse}: names in lower case. */
export interface FetchHeaders {
  /** The value, several joined by `", "`; `null` when absent. Case-insensitive. */
  get(name: string): string | null;
  has(name: string): boolean;
  forEach(callback: (value: string, name: string) => void): void;
  entries(): IterableIterator<[string, string]>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

/** What `ctx.fetch` resolves to: the useful part of the standard `Response`. */
export interface FetchResponse {
  /** A 3xx answer is returned as it is: redirects are not followed. */
  readonly status: number;
  /** `status` is 200 to 299. */
  readonly ok: boolean;
  readonly statusText: string;
  readonly url: string;
  readonly headers: FetchHeaders;
  /** The body as text (UTF-8). */
  text(): Promise<string>;
  /** The body parsed as JSON; rejects when it is not JSON. */
  json<T = unknown>(): Promise<T>;
}

/** The request the SDK hands the host's `fetch` binding. */
export interface FetchRequest {
  url: string;
  method?: string;
  headers?: [string, string][];
  body?: string;
}

/** The host's reply to a {@link FetchRequest}. */
export interface FetchReply {
  status: number;
  statusText: string;
  url: string;
  headers: [string, string][];
  body: string;
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
  /** The platforms whose devices may run it (default: every one); another device refuses the call. */
  supportedPlatforms?: ReadonlyArray<"android" | "ios" | "web" | "desktop">;
  /** The original's driver hint; read, and needs nothing more here. */
  supportedDrivers?: readonly string[];
  /** The original's hint that the handler needs `ctx`; every handler gets one here. */
  requiresContext?: boolean;
  /** The original's hint that the tool must run on the host; every tool does here. */
  requiresHost?: boolean;
  /** The original's trailhead metadata (the waypoint a launch tool reaches); kept for its UI. */
  trailhead?: { to?: string; dynamic?: boolean };
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
// `O` defaults so `trailblaze.tool<Input>(...)` (the original's usual spelling) needs no second argument.
function tool<I, O = unknown>(spec: ToolSpec, handler: ToolHandler<I, O>): ScriptedTool<I, O>;
function tool<I, O = unknown>(handler: ToolHandler<I, O>): ScriptedTool<I, O>;
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
// Building `ctx` from the host's raw bindings. The embedded engine (QuickJS, in process) and the
// Node subprocess runtime both build `ctx` here, so both behave identically; this file is the only
// source of the script-side SDK (the host serves a build of it).

/** A reply of the host over the subprocess runtime's HTTP callback. */
export type Envelope = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The host's raw bindings. Each returns the call's value or throws (rejects) an Error carrying the
 * host's message; the subprocess runtime turns its JSON envelopes into that shape with
 * {@link unwrapEnvelope}. In process there is no envelope object: allocating one per call cost a
 * fifth of a host call.
 */
export interface ContextBindings {
  /** Dispatch a tool; may reply synchronously or with a promise (the subprocess runtime's HTTP callback). */
  callTool(name: string, args: unknown): unknown;
  /** Call a host function; must reply synchronously, since `ctx.host` is synchronous. */
  callHost(name: string, args: unknown): unknown;
  /**
   * Names the host knows. They become own properties of the namespaces (a plain property read in
   * a hot loop); any other name still reaches the host, which answers with the nearest names.
   */
  toolNames?: readonly string[];
  hostNames?: readonly string[];
  /**
   * Optional: one binding per known host function, `(args) => value`, so a call in a hot loop need
   * not pass (and the host need not look up) its name. `callHost` still answers every other name.
   */
  hostFunctions?: Readonly<Record<string, (args: unknown) => unknown>>;
  /**
   * Optional: given by a host whose `hostFunctions` throw {@link TrailblazeHostError} themselves
   * (and take a missing argument as `{}`). It is handed that class once; the functions then become
   * `ctx.host`'s members as they are, with no wrapper of this SDK's around each call.
   */
  adoptHostError?(errorClass: typeof TrailblazeHostError): void;
  /** `ctx.fetch`'s exchange, made by the host: a {@link FetchReply}, or a promise of one. */
  fetch?(request: FetchRequest): unknown;
}

/** The value of an envelope (or its JSON text), or an Error with the host's message. */
export function unwrapEnvelope(reply: unknown, name: string): unknown {
  const envelope: unknown = typeof reply === "string" ? JSON.parse(reply) : reply;
  if (typeof envelope === "object" && envelope !== null && (envelope as { ok?: unknown }).ok === true) {
    return (envelope as { value?: unknown }).value;
  }
  const error = typeof envelope === "object" && envelope !== null ? (envelope as { error?: unknown }).error : undefined;
  throw new Error(typeof error === "string" ? error : `malformed reply from the host for ${name}`);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// A Proxy answers any property name, so things the language itself probes must not become
// calls: `then` (awaiting or returning the namespace would dispatch a tool named "then"),
// `toJSON` (JSON.stringify), symbols and Object.prototype members (String(), inspection).
function isProbe(key: string | symbol): key is symbol {
  return typeof key !== "string" || key === "then" || key === "toJSON" || key in Object.prototype;
}

// Known names are own properties; any other name falls through to a Proxy prototype, so calling
// it still reaches the host and gets its "unknown tool / host function" answer.
function namespace(make: (name: string) => unknown, names: readonly string[] = []): object {
  const fallback = new Proxy({}, {
    get(target, key) {
      return isProbe(key) ? Reflect.get(target, key) : make(key);
    },
  });
  const ns = Object.create(fallback) as Record<string, unknown>;
  for (const name of names) {
    if (!isProbe(name)) ns[name] = make(name);
  }
  return Object.freeze(ns);
}

// ---------------------------------------------------------------------------------------------
// `ctx.fetch`: the request is normalized here and the reply made `Response`-like here, so both
// runtimes hand the host the same JSON and give scripts the same object.

function fetchRequest(input: unknown, init: FetchInit | undefined): FetchRequest {
  const url =
    typeof input === "string"
      ? input
      : input !== null && typeof input === "object" && typeof (input as { url?: unknown }).url === "string"
        ? (input as { url: string }).url
        : String(input);
  const request: FetchRequest = { url };
  if (init === undefined || init === null) return request;
  if (init.method !== undefined) request.method = String(init.method);
  const given = init.headers;
  if (given !== undefined && given !== null) {
    const headers: [string, string][] = [];
    if (Array.isArray(given)) {
      for (const pair of given as ReadonlyArray<readonly [string, string]>) headers.push([String(pair[0]), String(pair[1])]);
    } else if (typeof (given as { forEach?: unknown }).forEach === "function") {
      (given as { forEach(cb: (v: string, n: string) => void): void }).forEach((v, n) => headers.push([String(n), String(v)]));
    } else {
      for (const [n, v] of Object.entries(given as Record<string, string>)) headers.push([n, String(v)]);
    }
    request.headers = headers;
  }
  if (init.body !== undefined && init.body !== null) {
    if (typeof init.body !== "string") {
      throw new TypeError("ctx.fetch: `body` must be a string (JSON.stringify an object first)");
    }
    request.body = init.body;
  }
  return request;
}

function fetchResponse(reply: FetchReply): FetchResponse {
  const pairs = reply.headers.map(([n, v]): [string, string] => [n.toLowerCase(), v]);
  const joined = (name: string): string | null => {
    const key = name.toLowerCase();
    const values = pairs.filter(([n]) => n === key).map(([, v]) => v);
    return values.length === 0 ? null : values.join(", ");
  };
  const headers: FetchHeaders = Object.freeze({
    get: joined,
    has: (name: string) => joined(name) !== null,
    forEach: (callback: (value: string, name: string) => void) => pairs.forEach(([n, v]) => callback(v, n)),
    entries: () => pairs.map(([n, v]): [string, string] => [n, v])[Symbol.iterator](),
    [Symbol.iterator]: () => pairs.map(([n, v]): [string, string] => [n, v])[Symbol.iterator](),
  });
  const body = reply.body;
  return Object.freeze({
    status: reply.status,
    ok: reply.status >= 200 && reply.status < 300,
    statusText: reply.statusText,
    url: reply.url,
    headers,
    text: async () => body,
    json: async <T>() => JSON.parse(body) as T,
  });
}

/** Builds the `ctx` handed to a handler from the host's raw bindings. */
export function makeContext(bindings: ContextBindings): ToolContext {
  const { callTool, callHost } = bindings;
  const tools = namespace(
    // A missing argument is sent as {} so a tool with only optional fields can be called bare.
    (name) => async (args?: unknown) => {
      try {
        return await callTool(name, args === undefined ? {} : args);
      } catch (e) {
        throw new TrailblazeToolError(messageOf(e), name);
      }
    },
    bindings.toolNames,
  );
  const direct = bindings.hostFunctions ?? {};
  // Functions that throw the SDK's error themselves need no wrapper frame (a tenth of a host call).
  const bare = typeof bindings.adoptHostError === "function";
  if (bare) bindings.adoptHostError!(TrailblazeHostError);
  const host = namespace((name) => {
    const fn = Object.prototype.hasOwnProperty.call(direct, name) ? direct[name] : undefined;
    if (fn !== undefined && bare) return fn;
    if (fn !== undefined) {
      return (args?: unknown) => {
        try {
          return fn(args === undefined ? {} : args);
        } catch (e) {
          throw new TrailblazeHostError(messageOf(e), name);
        }
      };
    }
    return (args?: unknown) => {
      try {
        return callHost(name, args === undefined ? {} : args);
      } catch (e) {
        throw new TrailblazeHostError(messageOf(e), name);
      }
    };
  }, bindings.hostNames ?? Object.keys(direct));
  const rawFetch = bindings.fetch;
  const fetch = async (input: unknown, init?: FetchInit): Promise<FetchResponse> => {
    const request = fetchRequest(input, init);
    if (rawFetch === undefined) throw new TrailblazeHostError("fetch: this runtime gives scripts no network", "fetch");
    let reply: unknown;
    try {
      reply = await rawFetch(request);
    } catch (e) {
      throw new TrailblazeHostError(messageOf(e), "fetch");
    }
    return fetchResponse(reply as FetchReply);
  };
  return Object.freeze({ tools: tools as TrailblazeTools, host: host as TrailblazeHost, fetch });
}

// ---------------------------------------------------------------------------------------------
// Selectors: `selectors.androidAccessibility({ textRegex: "Submit" })` is sugar for the literal
// `{ androidAccessibility: { textRegex: "Submit" } }` that recordings hold; it scopes an IDE's
// completion to one driver. Both forms are interchangeable.

/** Builds a `TrailblazeNodeSelector` for one driver. */
export const selectors = Object.freeze({
  androidAccessibility: (match: AndroidAccessibilityMatch): TrailblazeNodeSelector => ({ androidAccessibility: match }),
  androidMaestro: (match: AndroidMaestroMatch): TrailblazeNodeSelector => ({ androidMaestro: match }),
  web: (match: WebMatch): TrailblazeNodeSelector => ({ web: match }),
  compose: (match: ComposeMatch): TrailblazeNodeSelector => ({ compose: match }),
  iosMaestro: (match: IosMaestroMatch): TrailblazeNodeSelector => ({ iosMaestro: match }),
  iosAxe: (match: IosAxeMatch): TrailblazeNodeSelector => ({ iosAxe: match }),
});
