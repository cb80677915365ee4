use serde_json::{Value, json};

use super::*;

mod robustness;
mod tools;
mod types;

const FILE: &str = "tools/t.ts";

fn no_imports(_: &str, _: &str) -> Option<(String, String)> {
    None
}

fn analyze(source: &str) -> Vec<AnalyzedTool> {
    analyze_module(FILE, source, &no_imports).unwrap_or_else(|e| panic!("{e}\n{source}"))
}

fn analyze_err(source: &str) -> AnalyzeError {
    match analyze_module(FILE, source, &no_imports) {
        Ok(tools) => panic!("expected an error, got {tools:#?}"),
        Err(e) => e,
    }
}

fn one(source: &str) -> AnalyzedTool {
    let mut tools = analyze(source);
    assert_eq!(tools.len(), 1, "{tools:#?}");
    tools.remove(0)
}

/// A loader over in-memory files: `./x` and `./x.ts` from `dir/importer.ts` read `dir/x.ts`.
/// It records each request (from the analyzer's thread: behind a lock).
struct Files {
    files: Vec<(&'static str, &'static str)>,
    requests: std::sync::Mutex<Vec<String>>,
}

impl Files {
    fn new(files: &[(&'static str, &'static str)]) -> Self {
        Self {
            files: files.to_vec(),
            requests: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn load(&self, specifier: &str, importer: &str) -> Option<(String, String)> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(specifier.to_owned());
        let dir = importer.rsplit_once('/').map_or("", |(dir, _)| dir);
        let path = format!("{dir}/{}", specifier.strip_prefix("./")?);
        let path = if path.ends_with(".ts") {
            path
        } else {
            format!("{path}.ts")
        };
        let (name, source) = self.files.iter().find(|(name, _)| *name == path)?;
        Some(((*name).to_owned(), (*source).to_owned()))
    }

    fn analyze(&self, source: &str) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
        analyze_module(FILE, source, &|s, i| self.load(s, i))
    }

    fn analyze_err(&self, source: &str) -> AnalyzeError {
        self.analyze(source)
            .err()
            .unwrap_or_else(|| panic!("expected an error"))
    }
}

/// The schema of property `x` of a tool whose input is `{ x: <ty> }`, after `decls`.
fn field_with(decls: &str, ty: &str) -> (Value, bool) {
    let source = format!("{decls}\nexport const t = trailblaze.tool<{{ x: {ty} }}, void>(async () => {{}});\n");
    let input = one(&source).input_schema.unwrap_or_default();
    let required = input["required"].as_array().is_some_and(|r| r.contains(&json!("x")));
    (input["properties"]["x"].clone(), required)
}

fn field(ty: &str) -> Value {
    field_with("", ty).0
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// The 1-based line of the first line holding `needle`.
fn line_of(source: &str, needle: &str) -> u32 {
    let index = source
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?}"));
    u32::try_from(index + 1).unwrap_or(0)
}

fn assert_mentions(e: &AnalyzeError, needles: &[&str]) {
    let text = e.to_string();
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in: {text}");
    }
}

const SIGN_IN: &str = r#"import { trailblaze } from "@trailblaze/scripting";

/** Where to sign in. */
type Environment = "staging" | "production";

interface SignInInput {
  /** The account's email address. */
  email: string;
  /**
   * Leave out to use the stored password.
   */
  password?: string;
  environment: Environment;
  /** Retries before giving up. */
  retries: number | undefined;
  remember: boolean;
  tags: string[];
  profile: {
    /** Shown on the inbox. */
    displayName: string;
    locale?: "en" | "fr";
  };
  headers: Record<string, string>;
}

interface SignInResult {
  signedIn: boolean;
  screens: Array<{ name: string; at: number }>;
}

/**
 * Signs in with an email account.
 *
 * Waits for the inbox.
 * @param input the account
 */
export const signIn = trailblaze.tool<SignInInput, SignInResult>(
  { readOnly: true, surfaceToLlm: false },
  async (input, ctx) => {
    await ctx.tools.tap({ ref: "y1" });
    return { signedIn: true, screens: [] };
  },
);
"#;

const SHARED: &str = r#"
export * from "./base";
import type { Base } from "./base";

/** An account to sign in with. */
export interface Account extends Base {
  email: string;
}

export type Region = "eu" | "us";

export type Page<T> = { items: T[]; next?: string };
"#;

const BASE: &str = r#"
import type { Account } from "./shared";
export interface Base {
  /** Stable id. */
  id: string;
}
// A cycle back to shared.ts must not loop.
export type Accounts = Account[];
"#;
