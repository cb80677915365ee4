//! The original's mobile tools (keyboard, URLs, network, clipboard, app data, installed apps) on the
//! fake phone, each with the exact command it sent, and on the simulated device: a success and a
//! failure each.

use serde_json::json;
use trailblaze::android::wire::quote;
use trailblaze_e2e::android_fixture::{self as app, APP_ID, SERIAL, commands_since, fails, focus_search, passes};
use trailblaze_e2e::{CANARY, device_tree, field_text};
use trailblaze_host_functions::SecretStore;

#[test]
fn hide_keyboard_presses_back_only_while_the_keyboard_is_up() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    focus_search(&s);
    let before = fake.phone().commands.len();
    assert_eq!(passes(&s, "hideKeyboard", json!({}))["hidden"], true);
    assert_eq!(
        commands_since(&fake, before),
        ["dumpsys input_method", "input keyevent 4"]
    );
    assert!(!fake.phone().sim.keyboard_shown());
    assert_eq!(
        fake.phone().sim.current_screen(),
        Some("home"),
        "BACK closed the keyboard, not the screen"
    );
    // Failure to find a keyboard: nothing is pressed (BACK would leave the screen).
    let before = fake.phone().commands.len();
    assert_eq!(passes(&s, "hideKeyboard", json!({}))["hidden"], false);
    assert_eq!(commands_since(&fake, before), ["dumpsys input_method"]);
    let err = fails(&s, "hideKeyboard", json!({ "now": true }));
    assert!(err.contains("now"), "{err}");
}

#[test]
fn hide_keyboard_on_the_sim_hides_what_a_tap_showed() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    assert_eq!(
        passes(&s, "hideKeyboard", json!({}))["hidden"],
        false,
        "no field focused yet"
    );
    focus_search(&s);
    assert_eq!(passes(&s, "hideKeyboard", json!({}))["hidden"], true);
    // The field keeps its focus: typing still goes there.
    passes(&s, "inputText", json!({ "text": "shoes" }));
    assert_eq!(field_text(&device_tree(&s), "search").as_deref(), Some("shoes"));
}

#[test]
fn open_url_starts_a_view_intent_with_the_url_quoted() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let url = "https://example.com/a?b=c&d='e'&x=$(reboot)`id`";
    let hostile = passes(&s, "openUrl", json!({ "url": url, "reasoning": "docs" }));
    assert_eq!(hostile["opened"], url);
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some(format!("am start -a android.intent.action.VIEW -d {}", quote(url)))
    );
    assert_eq!(fake.phone().opened, [url], "the browser got the URL byte for byte");
    // Failure: nothing on the phone opens the scheme (am says so and still exits 0).
    let err = fails(&s, "openUrl", json!({ "url": format!("tel:{CANARY}") }));
    assert!(
        err.contains("no app on the device opens this URL") && !err.contains(CANARY),
        "{err}"
    );
    let before = fake.phone().commands.len();
    let err = fails(&s, "openUrl", json!({ "url": "not a url" }));
    assert!(err.contains("`url`"), "{err}");
    assert_eq!(fake.phone().commands.len(), before, "refused before anything was sent");
}

#[test]
fn the_sim_has_no_browser_network_shell_or_files() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    let sim = format!("sim:{APP_ID}");
    for (tool, args, what) in [
        ("openUrl", json!({ "url": "https://example.com" }), "cannot open URLs"),
        (
            "networkConnection",
            json!({ "connected": false }),
            "cannot switch its network",
        ),
        (
            "android_adbShell",
            json!({ "command": ["id"] }),
            "cannot run shell commands",
        ),
        (
            "android_sendBroadcast",
            json!({ "action": "a.b", "componentPackage": "", "componentClass": "" }),
            "cannot send broadcasts",
        ),
        (
            "android_writeFileToDownloads",
            json!({ "fileName": "a.txt", "content": "x" }),
            "cannot write files",
        ),
        (
            "android_writeBytesToFile",
            json!({ "devicePath": "/sdcard/a", "base64Content": "eA==" }),
            "cannot write files",
        ),
    ] {
        let err = fails(&s, tool, args);
        assert!(err.contains(&sim) && err.contains(what), "{tool}: {err}");
    }
}

#[test]
fn network_connection_switches_airplane_mode_on_android_11_and_later() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    assert_eq!(
        passes(&s, "networkConnection", json!({ "connected": false }))["connected"],
        false
    );
    assert!(fake.phone().airplane_mode);
    assert_eq!(
        fake.phone().commands.last().map(String::as_str),
        Some("cmd connectivity airplane-mode enable")
    );
    passes(&s, "networkConnection", json!({ "connected": true }));
    assert!(!fake.phone().airplane_mode);
    assert_eq!(
        fake.phone().commands.last().map(String::as_str),
        Some("cmd connectivity airplane-mode disable")
    );
    // Failure: an Android 10 phone has no such command.
    fake.phone().api_level = 29;
    let err = fails(&s, "networkConnection", json!({ "connected": false }));
    assert!(err.contains("Android 11") && err.contains(SERIAL), "{err}");
    assert!(!fake.phone().airplane_mode);
}

#[test]
fn the_clipboard_is_set_by_broadcast_and_pasted_as_typed_text() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    // Failure first: an empty clipboard pastes nothing.
    focus_search(&s);
    let err = fails(&s, "mobile_pasteClipboard", json!({}));
    assert!(err.contains("clipboard is empty"), "{err}");
    assert!(!fake.phone().commands.iter().any(|c| c.starts_with("input text")));
    let text = "it's \"50%s\" & $HOME;";
    assert_eq!(
        passes(&s, "mobile_setClipboard", json!({ "text": text }))["characters"],
        text.chars().count()
    );
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some(format!("am broadcast -a clipper.set --es text {}", quote(text)))
    );
    assert_eq!(
        fake.phone().clipboard.as_deref(),
        Some(text),
        "the clipboard app got it byte for byte"
    );
    assert_eq!(
        passes(&s, "mobile_pasteClipboard", json!({}))["typed"],
        text.chars().count()
    );
    assert_eq!(field_text(&device_tree(&s), "search").as_deref(), Some(text));
}

#[test]
fn the_sim_pastes_its_clipboard_and_a_secret_stays_masked() {
    let f = app::fixture();
    let secrets = SecretStore::from_pairs([("PIN".to_string(), CANARY.to_string())]);
    let (_p, s) = app::sim_session(&f, Some(secrets));
    let err = fails(&s, "mobile_pasteClipboard", json!({}));
    assert!(err.contains("clipboard is empty"), "{err}");
    assert_eq!(
        passes(&s, "mobile_setClipboard", json!({ "text": "{{secret:PIN}}" }))["characters"],
        3
    );
    focus_search(&s);
    assert_eq!(passes(&s, "mobile_pasteClipboard", json!({}))["typed"], 3);
    assert_eq!(
        field_text(&device_tree(&s), "search").as_deref(),
        Some(CANARY),
        "the app got the secret"
    );
    let snap = passes(&s, "snapshot", json!({}));
    assert!(!snap.to_string().contains(CANARY), "{snap}");
    assert!(snap["text"].as_str().is_some_and(|t| t.contains("\"***\"")), "{snap}");
}

#[test]
fn clear_app_data_runs_pm_clear_and_the_app_starts_fresh() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    focus_search(&s);
    passes(&s, "inputText", json!({ "text": "kept?" }));
    assert_eq!(
        passes(&s, "mobile_clearAppData", json!({ "appId": APP_ID }))["cleared"],
        APP_ID
    );
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some(format!("pm clear {}", quote(APP_ID)))
    );
    passes(&s, "launchApp", json!({ "appId": APP_ID, "launchMode": "RESUME" }));
    assert_eq!(field_text(&device_tree(&s), "search").as_deref(), Some(""));
    // Failures: an app the phone does not have; a name that is no package (never sent).
    let err = fails(&s, "mobile_clearAppData", json!({ "appId": "com.example.other" }));
    assert!(
        err.contains("cannot clear") && !err.contains("com.example.other"),
        "{err}"
    );
    let before = fake.phone().commands.len();
    let err = fails(&s, "mobile_clearAppData", json!({ "appId": "com.x;reboot" }));
    assert!(err.contains("package name"), "{err}");
    assert_eq!(fake.phone().commands.len(), before);
}

#[test]
fn clear_app_data_on_the_sim_resets_the_app() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    focus_search(&s);
    passes(&s, "inputText", json!({ "text": "gone" }));
    passes(&s, "mobile_clearAppData", json!({ "appId": APP_ID }));
    assert_eq!(device_tree(&s).app_id, None, "the app stopped, as pm clear stops it");
    passes(&s, "launchApp", json!({ "appId": APP_ID, "launchMode": "RESUME" }));
    assert_eq!(field_text(&device_tree(&s), "search").as_deref(), Some(""));
    let err = fails(&s, "mobile_clearAppData", json!({ "appId": "com.example.other" }));
    assert!(err.contains("not installed") && err.contains(APP_ID), "{err}");
}

#[test]
fn installed_apps_come_from_pm_list_and_dumpsys() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let ids = passes(&s, "mobile_listInstalledApps", json!({}));
    assert_eq!(
        ids,
        json!({ "appIds": ["com.android.chrome", "com.android.settings", APP_ID] })
    );
    assert_eq!(
        fake.phone().commands.last().map(String::as_str),
        Some("pm list packages")
    );
    let all = passes(&s, "mobile_listInstalledAppsDetailed", json!({}));
    let apps = all["apps"].as_array().cloned().unwrap_or_default();
    assert_eq!(apps.len(), 3, "{all}");
    assert_eq!(apps[0]["isSystemApp"], true);
    assert_eq!(apps[0]["version"], "15");
    let mine = passes(
        &s,
        "mobile_listInstalledAppsDetailed",
        json!({ "includeSystemApps": false }),
    );
    assert_eq!(mine["apps"][0]["appId"], APP_ID);
    assert_eq!(mine["apps"][0]["isSystemApp"], false);
    assert_eq!(mine["apps"][0]["buildNumber"], "102");
    assert_eq!(mine["apps"].as_array().map(Vec::len), Some(1), "{mine}");
    assert!(mine["apps"][0].get("label").is_none(), "dumpsys has no labels: {mine}");
    // Failures: a wrong argument type; the phone gone mid-call (a device failure naming it).
    let err = fails(
        &s,
        "mobile_listInstalledAppsDetailed",
        json!({ "includeSystemApps": "no" }),
    );
    assert!(err.contains("includeSystemApps"), "{err}");
    fake.drop_on("pm list");
    let err = s
        .call("mobile_listInstalledApps", json!({}))
        .expect_err("the phone is gone");
    assert!(err.is_device_failure() && err.to_string().contains(SERIAL), "{err}");
}

#[test]
fn the_sim_lists_its_one_app() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    assert_eq!(
        passes(&s, "mobile_listInstalledApps", json!({})),
        json!({ "appIds": [APP_ID] })
    );
    let all = passes(
        &s,
        "mobile_listInstalledAppsDetailed",
        json!({ "includeSystemApps": false }),
    );
    assert_eq!(all, json!({ "apps": [{ "appId": APP_ID, "isSystemApp": false }] }));
    let err = fails(&s, "mobile_listInstalledApps", json!({ "all": true }));
    assert!(err.contains("all"), "{err}");
}

#[test]
fn input_text_hides_the_keyboard_after_typing_when_asked() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    focus_search(&s);
    passes(&s, "inputText", json!({ "text": "shoes", "hideKeyboardAfter": true }));
    assert!(!fake.phone().sim.keyboard_shown(), "hidden after typing");
    // Control: without it the keyboard stays up.
    focus_search(&s);
    passes(&s, "inputText", json!({ "text": "hats" }));
    assert!(fake.phone().sim.keyboard_shown());
}
