// Host glue, not SDK: how `console.*` arguments become one line of text, the same in both runtimes
// (QuickJS imports it as `trailblaze:console`, the Node runner as a file beside it). Like Node:
// strings as they are, other primitives as text, Errors as `Name: message`, other objects as JSON
// (cycles, functions and bigints marked). The host scrubs and bounds the line; this only keeps a
// huge argument from being formatted whole.

const MAX_CHARS = 65536;
const { stringify } = JSON;
const { String: Str, Error: Err, WeakSet: Seen } = globalThis;

function errorText(e) {
  try {
    const name = typeof e.name === "string" ? e.name : "Error";
    return typeof e.message === "string" && e.message !== "" ? `${name}: ${e.message}` : name;
  } catch {
    return "[Error]";
  }
}

function json(v) {
  const seen = new Seen();
  try {
    const text = stringify(v, function (_k, x) {
      switch (typeof x) {
        case "bigint":
          return `${x}n`;
        case "function":
          return `[Function: ${x.name || "(anonymous)"}]`;
        case "symbol":
          return x.toString();
        case "undefined":
          return "undefined";
        case "object":
          if (x === null) return x;
          if (x instanceof Err) return errorText(x);
          if (seen.has(x)) return "[Circular]";
          seen.add(x);
          return x;
        default:
          return x;
      }
    });
    return text === undefined ? Str(v) : text;
  } catch (e) {
    return `[unprintable object: ${errorText(e)}]`;
  }
}

function show(v) {
  switch (typeof v) {
    case "string":
      return v;
    case "bigint":
      return `${v}n`;
    case "symbol":
      return v.toString();
    case "function":
      return `[Function: ${v.name || "(anonymous)"}]`;
    case "object":
      if (v === null) return "null";
      return v instanceof Err ? errorText(v) : json(v);
    default:
      return Str(v);
  }
}

/** The line `console.log(...args)` prints. */
export function formatLine(args) {
  let out = "";
  for (let i = 0; i < args.length && out.length <= MAX_CHARS; i++) {
    out += (i === 0 ? "" : " ") + show(args[i]);
  }
  return out.length > MAX_CHARS ? out.slice(0, MAX_CHARS) : out;
}

/** The levels both runtimes provide. */
export const LEVELS = ["log", "info", "warn", "error", "debug"];
