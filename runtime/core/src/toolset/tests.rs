use super::*;

fn file_set(id: &str, always: bool, tools: &[&str]) -> Toolset {
    Toolset {
        spec: ToolsetSpec {
            id: id.into(),
            description: String::new(),
            platforms: None,
            drivers: Some(vec!["android-ondevice-accessibility".into()]),
            always_enabled: always,
            tools: tools.iter().map(|s| s.to_string()).collect(),
        },
        file: None,
    }
}

#[test]
fn a_session_starts_with_the_declared_or_default_sets_and_the_always_enabled_ones() {
    let sets = Toolsets::with(vec![file_set("clock_setup", false, &["clock_reset"])]);
    let initial = sets.initial(Platform::Android);
    for id in ["core_interaction", "navigation", "verification", "memory", "meta"] {
        assert!(initial.contains(id), "{id} in {initial:?}");
    }
    assert!(!initial.contains("clock_setup") && !initial.contains("web_core"));
    // A declared list replaces the defaults; the always-enabled sets stay.
    let mut declared = sets.clone();
    declared.declared.insert("android".into(), vec!["clock_setup".into()]);
    let initial = declared.initial(Platform::Android);
    assert!(initial.contains("clock_setup") && initial.contains("core_interaction"));
    assert!(!initial.contains("navigation"));
}

#[test]
fn only_an_active_set_offers_a_governed_tool() {
    let sets = Toolsets::with(vec![file_set("clock_setup", false, &["clock_reset"])]);
    let active = sets.initial(Platform::Android);
    assert!(sets.governs(Platform::Android, "clock_reset"));
    assert!(!sets.offers(&active, "clock_reset"));
    let active = sets.effective(Platform::Android, &["clock_setup".into()]);
    assert!(sets.offers(&active, "clock_reset"));
    // A tool no set lists is not governed; a set for another platform governs nothing here.
    assert!(!sets.governs(Platform::Android, "stopApp"));
    assert!(!sets.governs(Platform::Android, "web_click"));
    assert!(sets.governs(Platform::Web, "web_click"));
}

#[test]
fn a_request_names_known_sets_for_the_platform() {
    let sets = Toolsets::with(vec![]);
    assert!(sets.check_request(Platform::Android, &["navigation".into()]).is_ok());
    let e = sets
        .check_request(Platform::Android, &["navigaton".into()])
        .unwrap_err();
    assert!(e.contains("did you mean `navigation`"), "{e}");
    let e = sets.check_request(Platform::Android, &["web_core".into()]).unwrap_err();
    assert!(e.contains("not for this session's device"), "{e}");
}

#[test]
fn files_load_strictly_and_a_listed_path_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("toolsets/extra")).unwrap();
    std::fs::write(
        dir.path().join("toolsets/a.yaml"),
        "id: a\ndescription: A\nalways_enabled: true\ntools: [x]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("toolsets/extra/b.yaml"), "id: b\ntols: [y]\n").unwrap();
    let (found, errors) = discover(dir.path(), &["missing.yaml".into()]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].spec.id, "a");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().any(|e| e.message.contains("tols") && e.pos.line == 2));
    assert!(errors.iter().any(|e| e.message.contains("missing.yaml")));
}
