//! What a trailmap declares: composed tools, host registrations, dependencies.

use serde_json::json;
use trailblaze::Catalog;
use trailblaze::Settings;
use trailblaze_e2e::{Fixture, device_tree, field_text};
use trailblaze_host_functions::HostRegistry;

#[test]
fn a_composed_tool_expands_into_steps_and_keeps_number_parameters_numbers() {
    let f = Fixture::new("t");
    f.file(
        "tools/retype.tool.yaml",
        "description: Retypes the email.\nparameters:\n  - { name: email, type: string, required: true }\n  - { name: n, type: integer }\ntools:\n  - tapOnElementBySelector: { nodeSelector: { androidAccessibility: { resourceIdRegex: '.*:id/email' } } }\n  - eraseText: { charactersToErase: \"{{params.n}}\" }\n  - inputText: { text: \"mail: {{params.email}} ({{params.n}})\" }\n",
    );
    let (_p, s) = f.session(Settings::default());
    s.call("retype", json!({ "email": "a@b.c", "n": 3 })).expect("runs");
    let steps: Vec<(String, serde_json::Value)> = s.steps().into_iter().map(|r| (r.tool, r.args)).collect();
    let tools: Vec<&str> = steps.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tools,
        ["tapOnElementBySelector", "eraseText", "inputText"],
        "each expanded call is its own step"
    );
    assert_eq!(
        steps[1].1,
        json!({ "charactersToErase": 3 }),
        "a whole placeholder keeps the number"
    );
    assert_eq!(
        steps[2].1,
        json!({ "text": "mail: a@b.c (3)" }),
        "inside a string it becomes text"
    );
    assert_eq!(
        field_text(&device_tree(&s), "email").as_deref(),
        Some("mail: a@b.c (3)")
    );
    let err = s
        .call("retype", json!({ "email": 5 }))
        .expect_err("typed parameters")
        .to_string();
    assert!(err.contains("email") && err.contains("expected string"), "{err}");
}

#[test]
fn a_host_declaration_whose_id_differs_from_the_function_is_an_error_naming_the_file() {
    let f = Fixture::new("t");
    f.file("host/now.host.yaml", "id: now\nclass: lookupCredential\n");
    let project = f.project();
    let err = Catalog::for_trailmap(&project.trailmaps, "t", project.registry.clone())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("now.host.yaml") && err.contains("must equal the function's name `lookupCredential`"),
        "{err}"
    );
}

#[test]
fn a_host_function_declared_twice_keeps_the_first_with_a_warning() {
    let f = Fixture::new("app");
    f.file("trailmap.yaml", "id: app\ndependencies: [shared]\n");
    f.file("host/now.host.yaml", "id: now\nclass: now\n");
    let shared = f.root().join("shared");
    std::fs::create_dir_all(shared.join("host")).unwrap();
    std::fs::write(shared.join("trailmap.yaml"), "id: shared\n").unwrap();
    std::fs::write(shared.join("host/now.host.yaml"), "id: now\nclass: now\n").unwrap();
    std::fs::write(shared.join("host/env.host.yaml"), "id: env\nclass: env\n").unwrap();
    let project = f.project();
    let c =
        Catalog::for_trailmap(&project.trailmaps, "app", std::sync::Arc::new(HostRegistry::builtin())).expect("loads");
    assert_eq!(
        c.host_names(),
        ["env", "now"],
        "a dependency's host functions are visible"
    );
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = &c.warnings[0];
    assert!(
        w.contains("app/host/now.host.yaml") && w.contains("shared/host/now.host.yaml"),
        "names both files: {w}"
    );
    // The dependency does not see the dependent's registrations.
    let s = Catalog::for_trailmap(
        &project.trailmaps,
        "shared",
        std::sync::Arc::new(HostRegistry::builtin()),
    )
    .expect("loads");
    assert!(s.warnings.is_empty());
}

#[test]
fn host_and_tools_folders_are_never_read_as_each_other() {
    let f = Fixture::new("t");
    f.file("host/sneaky.ts", "import { trailblaze } from \"@trailblaze/scripting\";\nexport const sneaky = trailblaze.tool(async () => ({}));\n");
    f.file("tools/now.host.yaml", "id: now\nclass: now\n");
    f.file("tools/fine.ts", "import { trailblaze } from \"@trailblaze/scripting\";\nexport const fine = trailblaze.tool(async () => ({}));\n");
    let project = f.project();
    let c = project.catalog("t").expect("loads");
    assert!(c.tool("sneaky").is_none(), "a .ts under host/ is no tool");
    assert!(c.host_names().is_empty(), "a .host.yaml under tools/ registers nothing");
    assert!(c.tool("fine").is_some(), "positive control");
}
