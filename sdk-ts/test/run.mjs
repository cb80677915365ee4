// `npm test`: proves the typed surface with the real, pinned tsc, then the runtime shim with node.
//
// Type cases run inside a throwaway copy of a trailmap's layout:
//   <tmp>/case-N/sdk-ts                  -> symlink to this package (so src/index.ts is the real one)
//   <tmp>/case-N/trailmaps/demo/tools/   tsconfig.json (test/fixtures/trailmap-tools.tsconfig.json,
//                                        verbatim: what `trailblaze dts` must generate),
//                                        trailblaze-client.d.ts and the case's .ts files
// so every case also checks the tsconfig the Rust host writes.
//
// A fixture line that must fail ends with `// @expect TS1234 [TS5678 ...]`. A case passes when
// tsc reports exactly the marked (file, line, code) diagnostics: no more, no fewer. Each negative
// fixture is compiled beside the positive one, which therefore must stay error-free.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const SDK = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURES = path.join(SDK, "test", "fixtures");
const TSC = path.join(SDK, "node_modules", "typescript", "bin", "tsc");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "trailblaze-sdk-test-"));

let passed = 0;
let failed = 0;

function report(name, problem) {
  if (problem === undefined) {
    passed++;
    console.log(`ok    ${name}`);
  } else {
    failed++;
    console.log(`FAIL  ${name}`);
    for (const line of String(problem).split("\n")) console.log(`      ${line}`);
  }
}

// tsc runs take ~1.5 s each, so they run concurrently, up to one per CPU.
let running = 0;
const waiting = [];
async function tsc(...args) {
  if (running >= os.availableParallelism()) await new Promise((resolve) => waiting.push(resolve));
  running++;
  const run = await new Promise((resolve) =>
    execFile(process.execPath, [TSC, "--pretty", "false", ...args], (error, stdout, stderr) =>
      resolve({ status: error ? (error.code ?? 1) : 0, stdout, stderr }),
    ),
  );
  running--;
  waiting.shift()?.();
  // Continuation lines of a diagnostic are indented; only the first line carries file and code.
  const diagnostics = [];
  for (const line of run.stdout.split("\n")) {
    const located = /^(.+)\((\d+),\d+\): error (TS\d+): /.exec(line);
    const global = /^error (TS\d+): /.exec(line);
    if (located) diagnostics.push({ file: path.basename(located[1]), line: Number(located[2]), code: located[3], text: line });
    else if (global) diagnostics.push({ file: "", line: 0, code: global[1], text: line });
  }
  return { status: run.status, output: run.stdout + run.stderr, diagnostics };
}

function expectedMarkers(file, asName) {
  const expected = [];
  fs.readFileSync(file, "utf8")
    .split("\n")
    .forEach((text, i) => {
      const marker = /\/\/ @expect((?:\s+TS\d+)+)\s*$/.exec(text);
      if (marker) for (const code of marker[1].trim().split(/\s+/)) expected.push({ file: asName, line: i + 1, code });
    });
  return expected;
}

const key = (d) => `${d.file}:${d.line} ${d.code}`;

let caseNo = 0;
/** Lays out a throwaway trailmap holding `files` ({source, as}) and returns its tools dir. */
function trailmap(files, withClient = true) {
  const root = path.join(TMP, `case-${++caseNo}`);
  const tools = path.join(root, "trailmaps", "demo", "tools");
  fs.mkdirSync(tools, { recursive: true });
  fs.symlinkSync(SDK, path.join(root, "sdk-ts"), "junction");
  fs.copyFileSync(path.join(FIXTURES, "trailmap-tools.tsconfig.json"), path.join(tools, "tsconfig.json"));
  if (withClient) fs.copyFileSync(path.join(FIXTURES, "client.d.ts"), path.join(tools, "trailblaze-client.d.ts"));
  for (const f of files) fs.copyFileSync(f.source, path.join(tools, f.as));
  return tools;
}

/** Compiles the fixtures as one trailmap; the diagnostics must be exactly the marked ones. */
async function typeCase(name, fixtureNames) {
  const files = fixtureNames.map((n) => ({ source: path.join(FIXTURES, n), as: path.basename(n) }));
  const expected = files.flatMap((f) => expectedMarkers(f.source, f.as)).map(key).sort();
  const { diagnostics, output } = await tsc("-p", trailmap(files));
  const actual = diagnostics.map(key).sort();
  const missing = expected.filter((k) => !actual.includes(k));
  const unexpected = diagnostics.filter((d) => !expected.includes(key(d))).map((d) => d.text);
  const problems = [
    ...missing.map((k) => `expected but not reported: ${k}`),
    ...unexpected.map((t) => `unexpected: ${t}`),
  ];
  if (diagnostics.length === 0 && /error/i.test(output)) problems.push(`tsc failed: ${output}`);
  const codes = expected.map((k) => k.split(" ")[1]).join(", ");
  return [`${name}${codes ? ` -> ${codes}` : " -> 0 errors"}`, problems.length ? problems.join("\n") : undefined];
}

async function typeCases() {
  if (!fs.existsSync(TSC)) {
    report("typescript is installed", `missing ${TSC}; run \`npm install\` in ${SDK}`);
    return;
  }
  const results = [];
  results.push(
    tsc("--noEmit", "-p", SDK).then((r) => ["the SDK itself type-checks", r.status === 0 ? undefined : r.output]),
  );

  results.push(typeCase("positive: realistic scripted tools compile", ["positive.ts"]));

  for (const neg of fs.readdirSync(path.join(FIXTURES, "negative")).sort()) {
    results.push(typeCase(`negative: ${neg.replace(/\.ts$/, "")}`, ["positive.ts", path.join("negative", neg)]));
  }

  // Without the generated file the maps are empty, so every ctx member is unknown: the surface
  // above really comes from the `declare module` augmentation.
  const positive = [{ source: path.join(FIXTURES, "positive.ts"), as: "positive.ts" }];
  results.push(
    tsc("-p", trailmap(positive, false)).then((bare) => {
      const codes = [...new Set(bare.diagnostics.map((d) => d.code))];
      const ok = bare.diagnostics.length > 0 && codes.length === 1 && codes[0] === "TS2339";
      return [
        "augmentation: without trailblaze-client.d.ts, ctx.tools/ctx.host members are unknown -> TS2339",
        ok ? undefined : bare.output,
      ];
    }),
  );
  for (const [name, problem] of await Promise.all(results)) report(name, problem);
}

// ---------------------------------------------------------------------------------------------
// Runtime: emit src/ with the same tsc and exercise the shim as the host would.

async function runtimeCases() {
  const out = path.join(TMP, "emit");
  const emit = await tsc("-p", SDK, "--noEmit", "false", "--outDir", out);
  if (emit.status !== 0) return report("the SDK emits JavaScript", emit.output);
  const js = fs.readFileSync(path.join(out, "index.js"), "utf8");
  report(
    "runtime module is self-contained (no import/export-from left after stripping types)",
    /^\s*(import\s|export\s[^;]*\sfrom\s)/m.test(js) ? js : undefined,
  );
  const sdk = await import(pathToFileURL(path.join(out, "index.js")).href);
  const { trailblaze, makeContext, unwrapEnvelope, selectors, TrailblazeHostError, TrailblazeToolError } = sdk;

  // Records binding calls and replies from a table, like a host would: a value, a function of the
  // arguments, or { throws: message } for a failed call.
  function bindings(replies, names = {}) {
    const calls = [];
    const reply = (kind) => (name, args) => {
      calls.push([kind, name, args]);
      const r = replies[`${kind}:${name}`];
      if (r === undefined) throw new Error(`test binding has no reply for ${kind}:${name}`);
      if (r !== null && typeof r === "object" && "throws" in r) throw new Error(r.throws);
      return typeof r === "function" ? r(args) : r;
    };
    return { calls, callTool: reply("tool"), callHost: reply("host"), ...names };
  }

  const cases = {
    "tool(spec, handler) is exactly { __trailblazeTool: true, spec, handler }"() {
      const spec = { description: "d", readOnly: true };
      const handler = async () => 1;
      const t = trailblaze.tool(spec, handler);
      assert.deepEqual(t, { __trailblazeTool: true, spec, handler });
    },
    "tool(handler) gets spec {}"() {
      const handler = () => 1;
      const t = trailblaze.tool(handler);
      assert.deepEqual(t, { __trailblazeTool: true, spec: {}, handler });
    },
    "default export is the trailblaze object"() {
      assert.equal(sdk.default, trailblaze);
    },
    async "ctx.tools.x(args) returns a Promise of the binding's value"() {
      const b = bindings({ "tool:tap": { tapped: "y1" } });
      const p = makeContext(b).tools.tap({ ref: "y1" });
      assert.ok(p instanceof Promise);
      assert.deepEqual(b.calls, [["tool", "tap", { ref: "y1" }]], "dispatched synchronously, before any await");
      assert.deepEqual(await p, { tapped: "y1" });
    },
    async "ctx.tools.x() accepts a binding that replies with a promise"() {
      const b = bindings({ "tool:a": async () => 1, "tool:b": async () => { throw new Error("nope"); } });
      const ctx = makeContext(b);
      assert.equal(await ctx.tools.a({}), 1);
      await assert.rejects(ctx.tools.b({}), (e) => e instanceof TrailblazeToolError && e.message === "nope");
    },
    async "ctx.tools.x() rejects with TrailblazeToolError when the binding throws"() {
      const b = bindings({ "tool:tap": { throws: "no node with ref y9" } });
      await assert.rejects(makeContext(b).tools.tap({ ref: "y9" }), (e) => {
        assert.ok(e instanceof TrailblazeToolError && e instanceof Error);
        assert.equal(e.name, "TrailblazeToolError");
        assert.equal(e.message, "no node with ref y9");
        assert.equal(e.tool, "tap");
        return true;
      });
    },
    "ctx.host.x(args) returns the value synchronously"() {
      const b = bindings({ "host:lookupCredential": { password: "p" } });
      const v = makeContext(b).host.lookupCredential({ account: "x" });
      assert.deepEqual(v, { password: "p" });
      assert.deepEqual(b.calls, [["host", "lookupCredential", { account: "x" }]]);
    },
    "ctx.host.x() throws TrailblazeHostError synchronously when the binding throws"() {
      const b = bindings({ "host:lookupCredential": { throws: "unknown account" } });
      assert.throws(
        () => makeContext(b).host.lookupCredential({ account: "x" }),
        (e) => e instanceof TrailblazeHostError && e.name === "TrailblazeHostError" &&
          e.message === "unknown account" && e.hostFunction === "lookupCredential",
      );
    },
    "unwrapEnvelope gives the value, or throws the host's message; malformed replies throw"() {
      assert.deepEqual(unwrapEnvelope({ ok: true, value: { a: 1 } }, "x"), { a: 1 });
      assert.equal(unwrapEnvelope(JSON.stringify({ ok: true, value: 2 }), "x"), 2);
      assert.throws(() => unwrapEnvelope({ ok: false, error: "boom" }, "x"), /^Error: boom$/);
      assert.throws(() => unwrapEnvelope({ value: 1 }, "now"), /malformed reply from the host for now/);
    },
    "known names are own properties; unknown names still reach the host"() {
      const b = bindings({ "host:now": 1, "host:other": 2 }, { hostNames: ["now"] });
      const ctx = makeContext(b);
      assert.ok(Object.prototype.hasOwnProperty.call(ctx.host, "now"));
      assert.equal(ctx.host.now(), 1);
      assert.equal(ctx.host.other(), 2);
    },
    "hostFunctions are ctx.host's members as they are when the host adopts TrailblazeHostError"() {
      const greet = (args) => ({ hello: args.name });
      let adopted;
      const ctx = makeContext({ ...bindings({}), hostNames: ["greet"], hostFunctions: { greet }, adoptHostError: (c) => (adopted = c) });
      assert.equal(adopted, TrailblazeHostError);
      assert.equal(ctx.host.greet, greet, "no wrapper around the host's own function");
      // Control: without `adoptHostError` the same function is wrapped, and its throw becomes the SDK's error.
      const failing = () => { throw new Error("bad"); };
      const wrapped = makeContext({ ...bindings({}), hostNames: ["greet"], hostFunctions: { greet: failing } });
      assert.notEqual(wrapped.host.greet, failing);
      assert.throws(() => wrapped.host.greet({}), (e) => e instanceof TrailblazeHostError && e.hostFunction === "greet" && e.message === "bad");
    },
    "selectors.<driver>(match) is the literal selector"() {
      assert.deepEqual(selectors.androidAccessibility({ textRegex: "Submit" }), { androidAccessibility: { textRegex: "Submit" } });
      assert.deepEqual(selectors.web({ cssSelector: "#a" }), { web: { cssSelector: "#a" } });
    },
    "a call without arguments sends {}"() {
      const b = bindings({ "host:now": 0 });
      makeContext(b).host.now();
      assert.deepEqual(b.calls, [["host", "now", {}]]);
    },
    async "ctx.fetch normalizes the request and makes the reply Response-like"() {
      const sent = [];
      const ctx = makeContext({
        ...bindings({}),
        fetch: (request) => {
          sent.push(request);
          return { status: 201, statusText: "Created", url: request.url, headers: [["Content-Type", "application/json"], ["x-a", "1"], ["x-a", "2"]], body: '{"id":7}' };
        },
      });
      const r = await ctx.fetch("http://127.0.0.1:9/o", { method: "post", headers: { authorization: "Bearer {{secret:T}}" }, body: "{}" });
      assert.deepEqual(sent, [{ url: "http://127.0.0.1:9/o", method: "post", headers: [["authorization", "Bearer {{secret:T}}"]], body: "{}" }]);
      assert.equal(r.status, 201);
      assert.equal(r.ok, true);
      assert.equal(r.headers.get("content-type"), "application/json");
      assert.equal(r.headers.get("X-A"), "1, 2");
      assert.equal(r.headers.has("nope"), false);
      assert.deepEqual(await r.json(), { id: 7 });
      assert.equal(await r.text(), '{"id":7}');
      // Pairs and Headers-like objects are read too; a non-string body is refused before the host.
      await ctx.fetch({ url: "http://127.0.0.1:9/p" }, { headers: [["a", "b"]] });
      assert.deepEqual(sent[1], { url: "http://127.0.0.1:9/p", headers: [["a", "b"]] });
      await assert.rejects(ctx.fetch("http://x", { method: "POST", body: { a: 1 } }), (e) => e instanceof TypeError);
      assert.equal(sent.length, 2);
    },
    async "ctx.fetch rejects with TrailblazeHostError naming fetch when the host refuses"() {
      const ctx = makeContext({ ...bindings({}), fetch: async () => { throw new Error("fetch: http://10.0.0.1 is not in this trailmap's `network.allow`"); } });
      await assert.rejects(ctx.fetch("http://10.0.0.1/"), (e) => e instanceof TrailblazeHostError && e.hostFunction === "fetch" && /network\.allow/.test(e.message));
      await assert.rejects(makeContext(bindings({})).fetch("http://x/"), (e) => e instanceof TrailblazeHostError && /no network/.test(e.message));
    },
    async "language probes (await, JSON.stringify, String) never dispatch"() {
      const b = bindings({});
      const ctx = makeContext(b);
      assert.equal(await ctx.tools, ctx.tools);
      JSON.stringify(ctx);
      String(ctx.host);
      `${ctx.tools}`;
      assert.deepEqual(b.calls, []);
    },
  };
  // A broken shim tends to fail asynchronously: a promise that never settles, or a rejection
  // nobody awaits. Both must become a failed case, not a hung or crashed runner.
  let stray;
  process.on("unhandledRejection", (e) => (stray = e));
  for (const [name, body] of Object.entries(cases)) {
    stray = undefined;
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("timed out after 2 s")), 2000);
    });
    try {
      await Promise.race([body(), timeout]);
      await new Promise((resolve) => setImmediate(resolve));
      if (stray !== undefined) throw stray;
      report(`runtime: ${name}`);
    } catch (e) {
      report(`runtime: ${name}`, e?.stack ?? e);
    } finally {
      clearTimeout(timer);
    }
  }
}

try {
  await typeCases();
  await runtimeCases();
} catch (e) {
  report("test runner", e?.stack ?? e);
} finally {
  fs.rmSync(TMP, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
