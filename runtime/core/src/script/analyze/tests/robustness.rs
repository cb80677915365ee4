//! No input may take the process down: size and nesting guards, and no panics.

use super::*;

#[test]
fn pathological_sources_are_refused_before_swc_recurses() {
    let deep = format!("export const x = {}1{};\n", "(".repeat(20_000), ")".repeat(20_000));
    let e = analyze_err(&deep);
    assert_mentions(&e, &["nested deeper than 500"]);
    assert_eq!(e.line, 1);
    let generic = format!("type X = {}string{};\n", "Array<".repeat(30_000), ">".repeat(30_000));
    assert_mentions(&analyze_err(&generic), &["nested deeper than 500"]);
    let big = format!("export const x = 1;\n{}", "// padding\n".repeat(30_000));
    assert_mentions(&analyze_err(&big), &["more than the analyzer's limit"]);

    // The shapes that cost swc the most stack per byte, as large as the cap allows, parse
    // without overflowing the worker's stack.
    let budget = MAX_SOURCE_BYTES - 100;
    let arrows = format!("export const f = {}1;\n", "a=>".repeat(budget / 3));
    assert!(analyze(&arrows).is_empty());
    let nots = format!("export const n = {}true;\n", "!".repeat(budget));
    assert!(analyze(&nots).is_empty());

    // The fallback worker (for devices that cannot reserve the big stack) has a cap to match.
    let small = STACKS[1] / STACK_PER_BYTE;
    let on_small = |source: &str| {
        let modules = [(FILE.to_string(), source.to_string())];
        let mut done = on_workers(STACKS[1], &modules, &no_imports, &AnalyzeOptions::default(), 1)
            .unwrap_or_else(|e| panic!("{e}"));
        done.pop().expect("one result")
    };
    let arrows = format!("export const f = {}1;\n", "a=>".repeat((small - 100) / 3));
    assert_eq!(on_small(&arrows).map(|t| t.len()).ok(), Some(0));
    let too_big = format!("{arrows}{}", " ".repeat(small));
    assert!(on_small(&too_big).is_err_and(|e| e.message.contains("limit")));
}

#[test]
fn modules_analyzed_together_keep_their_order_and_their_own_errors() {
    let tool = |name: &str| {
        format!(
            "import {{ trailblaze }} from \"@trailblaze/scripting\";\nexport const {name} = trailblaze.tool(async () => {{}});\n"
        )
    };
    let modules: Vec<(String, String)> = (0..5)
        .map(|i| {
            let source = if i == 2 {
                "export const = ;".to_string()
            } else {
                tool(&format!("t{i}"))
            };
            (format!("tools/m{i}.ts"), source)
        })
        .collect();
    for threads in [1, 2, 8] {
        let done = analyze_modules_with(&modules, &no_imports, &AnalyzeOptions::default(), threads);
        let got: Vec<Result<String, String>> = done
            .into_iter()
            .map(|r| match r {
                Ok(tools) => Ok(tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>().join(",")),
                Err(e) => Err(e.file),
            })
            .collect();
        // The broken module fails alone, named; the others' tools are where their modules are.
        let want = [Ok("t0"), Ok("t1"), Err("tools/m2.ts"), Ok("t3"), Ok("t4")]
            .map(|r| r.map(str::to_string).map_err(str::to_string));
        assert_eq!(got, want, "{threads} thread(s)");
    }
    assert!(analyze_modules_with(&[], &no_imports, &AnalyzeOptions::default(), 2).is_empty());
}

#[test]
fn no_prefix_of_a_tool_makes_the_analyzer_panic() {
    // Every prefix of a real tool: each either analyzes or is an error, never a panic.
    let files = Files::new(&[("tools/shared.ts", SHARED), ("tools/base.ts", BASE)]);
    let source = format!("import type {{ Account }} from \"./shared\";\n{SIGN_IN}");
    let mut errors = 0;
    for end in (0..=source.len()).step_by(7).filter(|&i| source.is_char_boundary(i)) {
        match files.analyze(&source[..end]) {
            Ok(_) => {}
            Err(e) => {
                assert!(!e.message.contains("panicked"), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 0);
}
