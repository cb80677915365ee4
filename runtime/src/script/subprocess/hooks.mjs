// Module hooks for the trailblaze subprocess runtime: the same import rules as the embedded engine.
// `@trailblaze/scripting` is the host's build of the one SDK; a tool may import relative `.ts` files
// inside the trailmaps folder (`./x`, `./x.js` and `./x.ts` all name `x.ts`), whose JavaScript the
// host's own swc produces (fetched over the session's callback endpoint), and nothing else.
import { pathToFileURL } from "node:url";

let cfg;
let rootUrl;

export function initialize(data) {
  cfg = data;
  rootUrl = pathToFileURL(cfg.root.endsWith("/") ? cfg.root : cfg.root + "/").href;
}

export async function resolve(specifier, context, next) {
  if (specifier === "@trailblaze/scripting") return { url: cfg.sdkUrl, shortCircuit: true };
  const parent = context.parentURL;
  if (parent === undefined || !parent.startsWith(rootUrl)) return next(specifier, context);
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
    throw new Error(`${specifier}: only \`@trailblaze/scripting\` and relative \`.ts\` files can be imported`);
  }
  let url = new URL(specifier, parent).href;
  if (!url.startsWith(rootUrl)) throw new Error(`${specifier}: the import leaves the trailmaps folder`);
  if (url.endsWith(".js")) url = url.slice(0, -3) + ".ts";
  else if (!url.endsWith(".ts")) url += ".ts";
  return { url, shortCircuit: true };
}

export async function load(url, context, next) {
  if (!url.startsWith(rootUrl) || !url.endsWith(".ts")) return next(url, context);
  const module = decodeURIComponent(url.slice(rootUrl.length));
  const response = await fetch(cfg.url, {
    method: "POST",
    headers: { authorization: `Bearer ${cfg.token}`, "content-type": "application/json" },
    body: JSON.stringify({ action: "load_module", module, run: cfg.run }),
  });
  const reply = response.ok ? await response.json() : { ok: false, error: `callback refused (${response.status})` };
  if (reply.ok !== true) throw new Error(reply.error);
  return { format: "module", source: reply.value.code, shortCircuit: true };
}
