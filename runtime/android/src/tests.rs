use super::transport::take_exit_marker;
use super::*;
use crate::dump::parse_bounds;
use trailblaze_core::device::Bounds;

/// What the real `/bin/sh` passes to a program for `quote(s)`: `printf %s` prints its argument.
fn through_sh(quoted: &str) -> Vec<u8> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf %s {quoted}"))
        .output()
        .expect("sh runs");
    assert!(out.status.success(), "sh refused {quoted:?}");
    out.stdout
}

const HOSTILE: &[&str] = &[
    "plain",
    "two words",
    "it's",
    "'",
    "''",
    "\"double\"",
    "a&b;c|d",
    "$HOME $(id) `id`",
    "back\\slash",
    "*?[a-z]",
    "%s",
    "100%sure",
    "line1\nline2",
    "tab\there",
    "ünïcødé ✓ 日本",
    "-n",
    "",
];

#[test]
fn quote_survives_the_real_shell_byte_exact() {
    for s in HOSTILE {
        assert_eq!(through_sh(&quote(s)), s.as_bytes(), "quoting {s:?}");
    }
}

#[test]
fn unquoted_input_is_mangled_by_the_same_shell() {
    // Control: the shell check above can see a broken quote (here, none at all).
    assert_ne!(through_sh("two  words"), b"two  words");
    assert_ne!(through_sh("$HOME"), b"$HOME".to_vec());
}

#[test]
fn a_literal_percent_s_is_split_across_input_calls() {
    let p = pieces("a%sb%%s%");
    assert_eq!(
        p,
        vec![
            Piece::Text("a%".into()),
            Piece::Text("sb%%".into()),
            Piece::Text("s%".into())
        ]
    );
    // What `input text` does to each piece (`%s` → space) leaves the text as it was.
    let typed: String = p
        .iter()
        .map(|x| match x {
            Piece::Text(t) => t.replace("%s", " "),
            Piece::Enter => "\n".into(),
        })
        .collect();
    assert_eq!(typed, "a%sb%%s%");
    // Control: unsplit, `input text` would have typed spaces.
    assert_eq!("a%sb%%s%".replace("%s", " "), "a b% %");
}

#[test]
fn newlines_become_enter_and_nothing_is_lost() {
    assert_eq!(
        pieces("a\n\nb"),
        vec![
            Piece::Text("a".into()),
            Piece::Enter,
            Piece::Enter,
            Piece::Text("b".into())
        ]
    );
    assert_eq!(pieces("\n"), vec![Piece::Enter]);
}

#[test]
fn plain_input_types_printable_ascii_only() {
    assert!(plain_input_can_type("Hello, world! ~ `$&;|*%s\n"));
    assert!(!plain_input_can_type("café"));
    assert!(!plain_input_can_type("tab\t"));
    assert!(!plain_input_can_type("日本"));
}

#[test]
fn base64_matches_rfc_4648_vectors() {
    let vectors = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ];
    for (plain, encoded) in vectors {
        assert_eq!(base64(plain.as_bytes()), encoded);
    }
    assert_eq!(base64("ü✓".as_bytes()), "w7zinJM=");
}

#[test]
fn package_names_are_checked() {
    assert!(is_package_name("com.example.demo"));
    assert!(is_package_name("org.a_b.c1"));
    for bad in [
        "demo",
        "com..x",
        "com.example;reboot",
        "com.1x",
        "com.example demo",
        "",
        "-p.x",
    ] {
        assert!(!is_package_name(bad), "{bad:?}");
    }
}

#[test]
fn server_address_follows_flag_then_env_then_default() {
    let default = trailblaze_core::device::spec::adb_server_address_from(None, None, None).expect("default");
    assert_eq!(default.to_string(), "127.0.0.1:5037");
    let env = trailblaze_core::device::spec::adb_server_address_from(None, Some("tcp:127.0.0.1:6000"), Some("7000"))
        .expect("env");
    assert_eq!(env.port(), 6000);
    let port_only = trailblaze_core::device::spec::adb_server_address_from(None, None, Some("7000")).expect("port env");
    assert_eq!(port_only.port(), 7000);
    let flag = trailblaze_core::device::spec::adb_server_address_from(
        Some("127.0.0.1:5555"),
        Some("tcp:127.0.0.1:6000"),
        None,
    )
    .expect("flag");
    assert_eq!(flag.port(), 5555);
    let bad = trailblaze_core::device::spec::adb_server_address_from(None, Some("localfilesystem:/tmp/adb"), None)
        .expect_err("unix socket refused");
    assert!(bad.to_string().contains("expected tcp:HOST:PORT"), "{bad}");
    let bad = trailblaze_core::device::spec::adb_server_address_from(Some("127.0.0.1:http"), None, None)
        .expect_err("bad port");
    assert!(bad.to_string().contains("--adb-server"), "{bad}");
}

const REAL_DUMP: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example.demo" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]"><node index="0" text="Email" resource-id="com.example.demo:id/email" class="android.widget.EditText" package="com.example.demo" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="true" scrollable="false" long-clickable="true" password="false" selected="false" bounds="[48,200][1032,320]" hint="Email" /><node index="1" text="•••" resource-id="com.example.demo:id/password" class="android.widget.EditText" package="com.example.demo" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="true" password="true" selected="false" bounds="[48,340][1032,460]" hint="Password" /><node NAF="true" index="2" text="" resource-id="" class="android.widget.ImageButton" package="com.example.demo" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[900,40][1032,160]" /><node index="3" text="" resource-id="com.example.demo:id/dark" class="android.widget.Switch" package="com.example.demo" content-desc="Dark mode" checkable="true" checked="true" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[48,500][1032,600]" /><node index="4" text="Café &amp; 日本 &quot;q&quot;" resource-id="" class="android.widget.TextView" package="com.example.demo" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[48,620][1032,700]" /></node></hierarchy>"#;

#[test]
fn a_real_dump_parses_into_the_view_tree() {
    let tree = parse_dump(&format!("{REAL_DUMP}\nUI hierchary dumped to: /dev/tty\n")).expect("parses");
    assert_eq!(tree.app_id.as_deref(), Some("com.example.demo"));
    assert_eq!((tree.width, tree.height), (1080, 2400));
    let kids = &tree.root.children;
    assert_eq!(kids.len(), 5);
    let email = &kids[0];
    assert!(email.editable && email.focused && email.clickable);
    assert_eq!(email.text, None, "an empty field's text is its hint");
    assert_eq!(email.hint_text.as_deref(), Some("Email"));
    assert_eq!(email.resource_id.as_deref(), Some("com.example.demo:id/email"));
    assert_eq!(
        email.bounds,
        Bounds {
            left: 48,
            top: 200,
            right: 1032,
            bottom: 320
        }
    );
    let password = &kids[1];
    assert!(password.password);
    assert_eq!(password.text.as_deref(), Some("•••"));
    let naf = &kids[2];
    assert!(naf.clickable && naf.text.is_none() && naf.content_description.is_none());
    let switch = &kids[3];
    assert_eq!(switch.checked, Some(true));
    assert!(!switch.enabled);
    assert_eq!(switch.content_description.as_deref(), Some("Dark mode"));
    assert_eq!(kids[4].text.as_deref(), Some("Café & 日本 \"q\""));
    assert_eq!(kids[4].checked, None, "not checkable: no checked state");
}

#[test]
fn a_field_holding_text_keeps_it() {
    // Control for the hint rule: text different from the hint is the field's text.
    let xml = REAL_DUMP.replacen(r#"text="Email""#, r#"text="jane@example.com""#, 1);
    let tree = parse_dump(&xml).expect("parses");
    assert_eq!(tree.root.children[0].text.as_deref(), Some("jane@example.com"));
}

#[test]
fn broken_dumps_are_clear_errors() {
    let cut = &REAL_DUMP[..REAL_DUMP.find("<node index=\"3\"").expect("node 3")];
    assert!(parse_dump(cut).expect_err("cut").contains("cut short"));
    let none = parse_dump("ERROR: could not get idle state.").expect_err("no xml");
    assert!(none.contains("could not get idle state"), "{none}");
    let bad = REAL_DUMP.replacen("[48,200][1032,320]", "[48,200]", 1);
    let err = parse_dump(&bad).expect_err("bad bounds");
    assert!(err.contains("bad bounds") && err.contains(":1:"), "{err}");
}

#[test]
fn bounds_parse() {
    assert_eq!(
        parse_bounds("[0,0][1080,2400]"),
        Some(Bounds {
            left: 0,
            top: 0,
            right: 1080,
            bottom: 2400
        })
    );
    assert_eq!(parse_bounds("[0,0]"), None);
    assert_eq!(parse_bounds("[a,0][1,1]"), None);
}

#[test]
fn the_exit_marker_gives_the_status_and_leaves_the_output() {
    let mut out = b"\x89PNG binary\n\x00__trailblaze_exit=0\n".to_vec();
    assert_eq!(take_exit_marker(&mut out), Some(0));
    assert_eq!(out, b"\x89PNG binary\n\x00");
    let mut out = b"Failed\n__trailblaze_exit=255\r\n".to_vec();
    assert_eq!(take_exit_marker(&mut out), Some(255));
    assert_eq!(out, b"Failed\n");
    // Control: output cut before the marker (the connection dropped) has no status.
    let mut cut = b"UI hierch".to_vec();
    assert_eq!(take_exit_marker(&mut cut), None);
    assert_eq!(cut, b"UI hierch");
    let mut typed = b"__trailblaze_exit=0 typed by someone\n".to_vec();
    assert_eq!(
        take_exit_marker(&mut typed),
        None,
        "only a marker at the very end counts"
    );
}
