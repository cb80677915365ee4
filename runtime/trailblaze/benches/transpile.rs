//! swc transpile throughput (`cargo bench --bench transpile`).
//!
//! The input is a generated, deterministic ~100 KB `.ts` file shaped like real scripted tools:
//! interfaces, type aliases, enums, generic helpers, classes and async tools. The uncached
//! benches call `transpile_uncached`, so every iteration really runs swc; the cached one shows
//! what a memory hit costs (hashing the source).

use std::fmt::Write;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use trailblaze::scripting::{Transpiler, transpile_uncached};

/// One "tool file" worth of TypeScript, varied by `i` so no two units are identical.
fn unit(out: &mut String, i: usize) {
    let kind = ["Button", "EditText", "TextView", "ImageView"][i % 4];
    let _ = write!(
        out,
        r#"
/** Arguments of the step {i}; every field is documented for the LLM. */
export interface Step{i}Input {{
  /** Which account to use. */
  account: string;
  retries?: number;
  mode: "fast" | "slow" | "careful";
  target: {{ textRegex?: string; resourceIdRegex?: string; index?: number }};
  tags: readonly string[];
}}

export type Step{i}Result =
  | {{ ok: true; value: number; screen: string }}
  | {{ ok: false; error: string }};

export enum Phase{i} {{
  Idle,
  Running = 10,
  Done,
  Failed = "failed",
}}

type Handler{i}<T extends object, R = void> = (value: T, index: number) => Promise<R>;

export function pick{i}<T, K extends keyof T>(obj: T, keys: readonly K[]): Pick<T, K> {{
  const out = {{}} as Pick<T, K>;
  for (const k of keys) {{
    out[k] = obj[k];
  }}
  return out;
}}

export class Retry{i}<T> {{
  private attempts: number = 0;
  static readonly label: string = "{kind}-{i}";
  constructor(private readonly limit: number, protected name?: string) {{}}

  get remaining(): number {{
    return this.limit - this.attempts;
  }}

  async run(fn: () => Promise<T>, onError?: (e: unknown) => void): Promise<T | undefined> {{
    while (this.attempts < this.limit) {{
      this.attempts += 1;
      try {{
        return await fn();
      }} catch (e: unknown) {{
        onError?.(e);
      }}
    }}
    return undefined;
  }}
}}

async function each{i}<T extends object>(items: T[], handler: Handler{i}<T>): Promise<void> {{
  for (let index = 0; index < items.length; index++) {{
    await handler(items[index]!, index);
  }}
}}

/** Signs in and checks the {kind} on screen {i}. */
export const step{i} = trailblaze.tool<Step{i}Input, Step{i}Result>(
  {{ description: "Run step {i}", readOnly: {ro} }},
  async (input: Step{i}Input, ctx: ToolContext): Promise<Step{i}Result> => {{
    const retry = new Retry{i}<number>(input.retries ?? 3, `step-{i}`);
    const creds = ctx.host.lookupCredential({{ account: input.account }}) as {{ username: string }};
    const phase: Phase{i} = input.mode === "fast" ? Phase{i}.Running : Phase{i}.Idle;
    const selector = {{ androidAccessibility: {{ ...input.target, classNameRegex: "{kind}" }} }} satisfies Record<string, unknown>;
    await each{i}(input.tags.map((t) => ({{ t }})), async ({{ t }}, n) => {{
      await ctx.tools.tapOnElementBySelector({{ nodeSelector: selector, reason: `${{t}} #${{n}}` }});
    }});
    const value = await retry.run(async () => {{
      const snap = await ctx.tools.snapshot({{}});
      return (snap as {{ nodes: unknown[] }}).nodes?.length ?? 0;
    }});
    if (value === undefined || phase === Phase{i}.Failed) {{
      return {{ ok: false, error: `no {kind} for ${{creds.username}}` }};
    }}
    return {{ ok: true, value: value * {i}, screen: pick{i}(input, ["mode"]).mode }};
  }},
);
"#,
        ro = i.is_multiple_of(3),
    );
}

/// A deterministic TypeScript module: at least one unit, then more until `min_bytes`.
fn generate(min_bytes: usize) -> String {
    let mut src = String::from(
        "import { trailblaze } from \"@trailblaze/scripting\";\n\
         import type { ToolContext } from \"@trailblaze/scripting\";\n",
    );
    let mut i = 0;
    loop {
        unit(&mut src, i);
        i += 1;
        if src.len() >= min_bytes {
            return src;
        }
    }
}

fn bench(c: &mut Criterion) {
    let big = generate(100 * 1024);
    let small = generate(0);

    // Fail loudly, not with a meaningless number, if the input stops being valid TypeScript.
    for src in [&big, &small] {
        if let Err(e) = transpile_uncached("bench.ts", src) {
            panic!("benchmark input does not transpile: {e}");
        }
    }

    let mut group = c.benchmark_group("transpile");
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("uncached_100kb", |b| {
        b.iter(|| transpile_uncached("bench.ts", black_box(&big)))
    });
    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("uncached_one_tool", |b| {
        b.iter(|| transpile_uncached("bench.ts", black_box(&small)))
    });
    let cache = Transpiler::new(None);
    group.throughput(Throughput::Bytes(big.len() as u64));
    group.bench_function("memory_hit_100kb", |b| {
        b.iter(|| cache.transpile("bench.ts", black_box(&big)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
