//! The `android_*` built-ins on the fake phone: the exact shell line each sends (hostile values arrive
//! byte-exact, never interpreted), files over adb's sync protocol, and a failure for each; on the
//! simulated device, the grants and demo mode succeed doing nothing.

use serde_json::json;
use trailblaze::android::wire::{base64, quote};
use trailblaze_e2e::CANARY;
use trailblaze_e2e::android_fixture::{self as app, APP_ID, commands_since, fails, passes};
use trailblaze_e2e::fake_adb::Sent;

/// Strings a shell would split, expand, glob or run, if it were given the chance.
const HOSTILE: &[&str] = &[
    "two  words",
    "it's \"quoted\"",
    "a&b;c|d && e || f",
    "$HOME $(reboot) `id` ${x}",
    "back\\slash \\n",
    "*?[a-z]~#!",
    "%s %% 100%",
    "line1\nline2",
    "-n",
    "ünïcødé ✓ 日本",
    "",
];

#[test]
fn adb_shell_passes_each_element_as_one_argument_byte_exact() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let mut command = vec!["printf".to_owned(), "<%s>\\n".to_owned()];
    command.extend(HOSTILE.iter().map(|h| h.to_string()));
    let out = passes(&s, "android_adbShell", json!({ "command": command }));
    let expected: String = HOSTILE.iter().map(|h| format!("<{h}>\n")).collect();
    assert_eq!(out["output"], expected);
    let line: Vec<String> = command.iter().map(|a| quote(a)).collect();
    assert_eq!(fake.phone().commands.last().cloned(), Some(line.join(" ")));
    // As another app: `run-as` in front, the same quoting behind.
    let out = passes(
        &s,
        "android_adbShell",
        json!({ "command": ["printf", "%s", "$x"], "runAs": APP_ID }),
    );
    assert_eq!(out["output"], "$x");
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some(format!("'run-as' '{APP_ID}' 'printf' '%s' '$x'"))
    );
}

#[test]
fn adb_shell_fails_on_a_non_zero_exit_without_quoting_the_arguments() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let err = fails(&s, "android_adbShell", json!({ "command": ["false"] }));
    assert!(err.contains("exited with status 1"), "{err}");
    let err = fails(&s, "android_adbShell", json!({ "command": ["no-such-tool", CANARY] }));
    assert!(err.contains("status 127") && !err.contains(CANARY), "{err}");
    let before = fake.phone().commands.len();
    for (args, what) in [
        (json!({ "command": [] }), "`command`"),
        (json!({ "command": ["exit", "3"] }), "`exit`"),
        (json!({ "command": ["id"], "runAs": "com.x;reboot" }), "`runAs`"),
        (json!({ "command": "id" }), "command"),
    ] {
        let err = fails(&s, "android_adbShell", args);
        assert!(err.contains(what), "{what}: {err}");
    }
    assert_eq!(fake.phone().commands.len(), before, "nothing refused reached the phone");
    let err = fails(
        &s,
        "android_adbShell",
        json!({ "command": ["id"], "runAs": "com.android.settings" }),
    );
    assert!(err.contains("not debuggable"), "{err}");
}

#[test]
fn send_broadcast_sends_typed_extras_byte_exact() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let mut extras: Vec<serde_json::Value> = HOSTILE
        .iter()
        .enumerate()
        .map(|(i, h)| json!({ "key": format!("k{i} {h}"), "value": h }))
        .collect();
    extras.push(json!({ "key": "count", "value": "-42", "type": "int" }));
    extras.push(json!({ "key": "on", "value": "true", "type": "EZ" }));
    extras.push(json!({ "key": "big", "value": "9000000000", "type": "long" }));
    extras.push(json!({ "key": "ratio", "value": "1.5", "type": "float" }));
    let v = passes(
        &s,
        "android_sendBroadcast",
        json!({ "action": "com.example.list.SET $MODE", "componentPackage": APP_ID,
                "componentClass": ".Receiver", "extras": extras }),
    );
    assert_eq!(v["sent"], "com.example.list.SET $MODE");
    let got = fake.phone().broadcasts.last().cloned();
    let mut want: Vec<(String, String, String)> = HOSTILE
        .iter()
        .enumerate()
        .map(|(i, h)| ("--es".to_owned(), format!("k{i} {h}"), h.to_string()))
        .collect();
    for (flag, k, v) in [
        ("--ei", "count", "-42"),
        ("--ez", "on", "true"),
        ("--el", "big", "9000000000"),
        ("--ef", "ratio", "1.5"),
    ] {
        want.push((flag.to_owned(), k.to_owned(), v.to_owned()));
    }
    assert_eq!(
        got,
        Some(Sent {
            action: "com.example.list.SET $MODE".into(),
            component: Some(format!("{APP_ID}/.Receiver")),
            extras: want,
        })
    );
    let line = fake.phone().commands.last().cloned().unwrap_or_default();
    assert!(
        line.starts_with(&format!("am broadcast -a 'com.example.list.SET $MODE' -n '{APP_ID}/.Receiver' --es 'k0 two  words' 'two  words' --es ")),
        "{line}"
    );
    // No component: a broadcast to whoever listens, without `-n`.
    passes(
        &s,
        "android_sendBroadcast",
        json!({ "action": "a.b", "componentPackage": "", "componentClass": "" }),
    );
    assert_eq!(
        fake.phone().commands.last().map(String::as_str),
        Some("am broadcast -a 'a.b'")
    );
}

#[test]
fn send_broadcast_refuses_bad_extras_naming_them_by_index() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let base = |extras: serde_json::Value| json!({ "action": "a.b", "componentPackage": APP_ID, "componentClass": ".R", "extras": extras });
    let before = fake.phone().commands.len();
    for (extras, what) in [
        (
            json!([{ "key": "n", "value": CANARY, "type": "int" }]),
            "`extras[0].value` is not a 32-bit integer",
        ),
        (
            json!([{ "key": "a", "value": "1" }, { "key": "a", "value": CANARY }]),
            "`extras[1].key` repeats",
        ),
        (json!([{ "key": " ", "value": "1" }]), "`extras[0].key` is empty"),
        (
            json!([{ "key": "b", "value": "yes", "type": "boolean" }]),
            "`true` or `false`",
        ),
        (json!([{ "key": "f", "value": "NaN", "type": "float" }]), "finite"),
        (
            json!([{ "key": "x", "value": "1", "type": "short" }]),
            "`extras[0].type`",
        ),
    ] {
        let err = fails(&s, "android_sendBroadcast", base(extras));
        assert!(err.contains(what) && !err.contains(CANARY), "{what}: {err}");
    }
    let err = fails(
        &s,
        "android_sendBroadcast",
        json!({ "action": "a.b", "componentPackage": APP_ID, "componentClass": "" }),
    );
    assert!(err.contains("together"), "{err}");
    assert_eq!(fake.phone().commands.len(), before, "nothing refused reached the phone");
    // Control: the same call with a valid extra goes through.
    passes(
        &s,
        "android_sendBroadcast",
        base(json!([{ "key": "n", "value": "7", "type": "int" }])),
    );
    assert_eq!(
        fake.phone().commands.last().map(String::as_str),
        Some("am broadcast -a 'a.b' -n 'com.example.list/.R' --ei 'n' '7'")
    );
}

#[test]
fn permissions_are_granted_with_pm_and_appops_and_undeclared_ones_are_no_failure() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let camera = "android.permission.CAMERA";
    let v = passes(
        &s,
        "android_grantPermission",
        json!({ "appId": APP_ID, "permission": camera }),
    );
    assert_eq!(v["granted"], true);
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some(format!("pm grant '{APP_ID}' '{camera}'"))
    );
    let v = passes(
        &s,
        "android_grantPermission",
        json!({ "appId": APP_ID, "permission": "android.permission.READ_SMS" }),
    );
    assert_eq!(v["granted"], false, "the app does not declare it: reported, not failed");
    let v = passes(
        &s,
        "android_grantPermissions",
        json!({ "appId": APP_ID, "permissions": [camera, "android.permission.READ_SMS", "android.permission.POST_NOTIFICATIONS"] }),
    );
    assert_eq!(v["granted"], json!([camera, "android.permission.POST_NOTIFICATIONS"]));
    let v = passes(
        &s,
        "android_grantAppOpsPermission",
        json!({ "appId": APP_ID, "permission": "MANAGE_EXTERNAL_STORAGE" }),
    );
    assert_eq!(v["granted"], true);
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some(format!("appops set '{APP_ID}' 'MANAGE_EXTERNAL_STORAGE' allow"))
    );
    assert_eq!(
        fake.phone().app_ops,
        [(APP_ID.to_owned(), "MANAGE_EXTERNAL_STORAGE".to_owned())]
    );
}

#[test]
fn grants_fail_for_a_missing_app_an_unknown_op_or_a_malformed_name() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let camera = "android.permission.CAMERA";
    let err = fails(
        &s,
        "android_grantPermission",
        json!({ "appId": "com.example.gone", "permission": camera }),
    );
    assert!(
        err.contains("not installed") && !err.contains("com.example.gone"),
        "{err}"
    );
    let err = fails(
        &s,
        "android_grantPermissions",
        json!({ "appId": "com.example.gone", "permissions": [camera] }),
    );
    assert!(err.contains("not installed"), "{err}");
    let err = fails(
        &s,
        "android_grantAppOpsPermission",
        json!({ "appId": APP_ID, "permission": "NOT_AN_OP" }),
    );
    assert!(err.contains("Unknown operation"), "{err}");
    let before = fake.phone().commands.len();
    let err = fails(
        &s,
        "android_grantPermission",
        json!({ "appId": APP_ID, "permission": "CAMERA; reboot" }),
    );
    assert!(err.contains("permission name") && !err.contains("reboot"), "{err}");
    let err = fails(
        &s,
        "android_grantAppOpsPermission",
        json!({ "appId": APP_ID, "permission": "$(id)" }),
    );
    assert!(err.contains("AppOps operation name"), "{err}");
    assert_eq!(
        fake.phone().commands.len(),
        before,
        "malformed names never reach the phone"
    );
}

#[test]
fn the_sim_grants_nothing_and_switches_no_demo_mode_yet_succeeds() {
    let f = app::fixture();
    let (_p, s) = app::sim_session(&f, None);
    let camera = "android.permission.CAMERA";
    let v = passes(
        &s,
        "android_grantPermission",
        json!({ "appId": APP_ID, "permission": camera }),
    );
    assert_eq!(v["granted"], false);
    let v = passes(
        &s,
        "android_grantAppOpsPermission",
        json!({ "appId": APP_ID, "permission": "WRITE_SETTINGS" }),
    );
    assert_eq!(v["granted"], false);
    assert_eq!(passes(&s, "android_systemUiDemoMode", json!({}))["demoMode"], true);
    // Failure: another app is not installed on the sim either.
    let err = fails(
        &s,
        "android_grantPermission",
        json!({ "appId": "com.example.gone", "permission": camera }),
    );
    assert!(err.contains("not installed"), "{err}");
}

#[test]
fn demo_mode_allows_it_then_broadcasts_each_demo_command() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let before = fake.phone().commands.len();
    assert_eq!(passes(&s, "android_systemUiDemoMode", json!({}))["demoMode"], true);
    let demo = "am broadcast -a com.android.systemui.demo -e command";
    assert_eq!(
        commands_since(&fake, before),
        [
            "settings put global sysui_demo_allowed 1".to_owned(),
            format!("{demo} enter"),
            format!("{demo} clock -e hhmm 1200"),
            format!("{demo} network -e wifi show -e level 4"),
            format!("{demo} network -e mobile show -e datatype lte -e level 4"),
            format!("{demo} battery -e plugged false -e level 100"),
            format!("{demo} notifications -e visible false"),
        ]
    );
    assert!(fake.phone().demo);
    passes(&s, "android_systemUiDemoMode", json!({ "enable": false }));
    assert_eq!(fake.phone().commands.last().cloned(), Some(format!("{demo} exit")));
    assert!(!fake.phone().demo);
    let err = fails(&s, "android_systemUiDemoMode", json!({ "enable": "yes" }));
    assert!(err.contains("enable"), "{err}");
}

#[test]
fn files_travel_over_the_sync_protocol_byte_exact() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let content = "{\"greeting\": \"héllo\", \"shell\": \"$(rm -rf /)\"}\n";
    let v = passes(
        &s,
        "android_writeFileToDownloads",
        json!({ "fileName": "setup 1.json", "content": content }),
    );
    let path = "/storage/emulated/0/Download/setup 1.json";
    assert_eq!(v, json!({ "path": path, "bytes": content.len() }));
    assert_eq!(
        fake.phone().files.get(path).map(Vec::as_slice),
        Some(content.as_bytes())
    );
    assert!(
        fake.phone()
            .commands
            .contains(&"mkdir -p '/storage/emulated/0/Download'".to_owned())
    );
    // Bytes bigger than one 64 KiB sync chunk, every byte value.
    let bytes: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let v = passes(
        &s,
        "android_writeBytesToFile",
        json!({ "devicePath": "/data/local/tmp/a dir/blob.bin", "base64Content": base64(&bytes) }),
    );
    assert_eq!(v["bytes"], bytes.len());
    assert_eq!(fake.phone().files.get("/data/local/tmp/a dir/blob.bin"), Some(&bytes));
    let png = b"\x89PNG\r\n\x1a\n-not-really";
    let v = passes(
        &s,
        "android_writeImageToMediaStore",
        json!({ "fileName": "receipt_1.png", "base64Content": base64(png) }),
    );
    assert_eq!(v["path"], "/sdcard/Pictures/receipt_1.png");
    assert_eq!(
        fake.phone().scanned,
        ["/sdcard/Pictures/receipt_1.png"],
        "registered in the media store"
    );
    assert_eq!(
        fake.phone().commands.last().cloned(),
        Some("'content' 'call' '--uri' 'content://media' '--method' 'scan_file' '--arg' '/sdcard/Pictures/receipt_1.png'".to_owned())
    );
}

#[test]
fn file_writes_refuse_bad_names_paths_and_base64_and_report_a_refusing_device() {
    let f = app::fixture();
    let fake = app::phone();
    let (_p, s) = app::phone_session(&f, &fake, None);
    let before = fake.phone().commands.len();
    for (tool, args, what) in [
        (
            "android_writeFileToDownloads",
            json!({ "fileName": "../evil", "content": "x" }),
            "`fileName`",
        ),
        (
            "android_writeFileToDownloads",
            json!({ "fileName": "..", "content": "x" }),
            "`fileName`",
        ),
        (
            "android_writeBytesToFile",
            json!({ "devicePath": "relative/x", "base64Content": "eA==" }),
            "absolute",
        ),
        (
            "android_writeBytesToFile",
            json!({ "devicePath": "/sdcard/x", "base64Content": CANARY }),
            "not valid base64",
        ),
        (
            "android_writeImageToMediaStore",
            json!({ "fileName": "my photo.png", "base64Content": "eA==" }),
            "`fileName`",
        ),
        (
            "android_writeImageToMediaStore",
            json!({ "fileName": "a.png", "base64Content": "eA==", "mimeType": "text/plain" }),
            "`mimeType`",
        ),
    ] {
        let err = fails(&s, tool, args);
        assert!(err.contains(what) && !err.contains(CANARY), "{tool} {what}: {err}");
    }
    assert_eq!(fake.phone().commands.len(), before, "nothing refused reached the phone");
    // The phone refuses a read-only folder: a failed call (the device answered), not a lost device.
    let err = fails(
        &s,
        "android_writeBytesToFile",
        json!({ "devicePath": "/system/x.bin", "base64Content": "eA==" }),
    );
    assert!(err.contains("Read-only file system"), "{err}");
}

#[test]
fn the_real_adb_client_pushes_to_the_fake_over_the_same_sync_protocol() {
    let Some(adb) = super::adb::real_adb() else { return };
    let fake = app::phone();
    let dir = tempfile::tempdir().expect("temp dir");
    let local = dir.path().join("blob.bin");
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i * 13 % 251) as u8).collect();
    std::fs::write(&local, &bytes).expect("write");
    let local = local.to_string_lossy().into_owned();
    let out = super::adb::adb_output(adb, fake.port(), &["push", &local, "/sdcard/Download/blob.bin"]);
    assert!(
        out.status.success(),
        "adb push: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fake.phone().files.get("/sdcard/Download/blob.bin"), Some(&bytes));
    // Control: a folder the phone refuses fails through the real client as well.
    let out = super::adb::adb_output(adb, fake.port(), &["push", &local, "/system/blob.bin"]);
    assert!(!out.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("remote couldn't create file /system/blob.bin: Read-only file system"),
        "{said}"
    );
    // And the keyboard's state, as `hideKeyboard` reads it.
    let out = super::adb::adb_output(adb, fake.port(), &["shell", "dumpsys", "input_method"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("  mInputShown=false\n"),
        "{out:?}"
    );
}
