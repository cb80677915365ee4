//! Each encoding the redaction recognises, beside a near miss it leaves alone. The expected forms
//! are written out (Python's `urllib`/`base64` and Chromium's own output), not computed here.

use super::super::Redaction;
use super::forms;

const PW: &str = "Tr0ub4dor&3/x é+";

fn scrubbed(secret: &str, text: &str) -> String {
    Redaction::new(&[secret.to_string()]).text(text).into_owned()
}

#[track_caller]
fn caught(secret: &str, forms: &[&str]) {
    for f in forms {
        assert_eq!(scrubbed(secret, &format!("pw={f}&next=1")), "pw=***&next=1", "`{f}`");
    }
}

#[track_caller]
fn left(secret: &str, texts: &[&str]) {
    for t in texts {
        assert_eq!(scrubbed(secret, t), *t, "a near miss was changed");
    }
}

#[test]
fn percent_encoded_as_each_standard_encoder_writes_it_in_either_hex_case() {
    caught(
        PW,
        &[
            // encodeURIComponent, Python's quote(safe=''), and in lower-case hex.
            "Tr0ub4dor%263%2Fx%20%C3%A9%2B",
            "Tr0ub4dor%263%2fx%20%c3%a9%2b",
            // A form's query (and URLSearchParams): `+` for space, `%20` too.
            "Tr0ub4dor%263%2Fx+%C3%A9%2B",
            "Tr0ub4dor%263%2Fx%20%C3%A9%2B",
            // A URL's path and fragment as Chromium writes them: `&`, `/`, `+` left.
            "Tr0ub4dor&3/x%20%C3%A9+",
            // encodeURI, and escape() (`%E9`, Latin-1).
            "Tr0ub4dor&3/x%20%C3%A9+",
            "Tr0ub4dor%263/x%20%E9+",
        ],
    );
    // A query as Chromium's `search` setter writes it (`'` and `#` escaped) and a password in a
    // URL's userinfo.
    caught("it's#1 ok?", &["it%27s%231%20ok?", "it%27s%231%20ok%3F"]);
    // Past the BMP: four UTF-8 bytes, and escape()'s UTF-16 halves.
    caught("key😀中", &["key%F0%9F%98%80%E4%B8%AD", "key%uD83D%uDE00%u4E2D"]);
    // Controls: another value, and this one with a character changed, in the same encodings.
    left(
        PW,
        &[
            "Tr0ub4dor%263%2Fy%20%C3%A9%2B",
            "Tr0ub4dor&3/x%20%C3%A8+",
            "pw=%26%2F%20",
            "Tr0ub4dor",
        ],
    );
}

#[test]
fn html_entities_named_decimal_and_hex_as_writers_escape_them() {
    let s = "a&b<c>\"d'e é";
    caught(
        s,
        &[
            "a&amp;b&lt;c&gt;&quot;d&#39;e é",
            "a&amp;b&lt;c&gt;&quot;d&apos;e é",
            "a&amp;b&lt;c&gt;&quot;d&#x27;e é",
            "a&amp;b&lt;c&gt;&quot;d'e é",
            "a&amp;b&lt;c&gt;\"d'e é",
            "a&#38;b&#60;c&#62;&#34;d&#39;e é",
            "a&#x26;b&#x3c;c&#x3e;&#x22;d&#x27;e é",
            "a&#x26;b&#x3C;c&#x3E;&#x22;d&#x27;e é",
            // An ASCII-only page.
            "a&#38;b&#60;c&#62;&#34;d&#39;e &#233;",
            "a&#x26;b&#x3c;c&#x3e;&#x22;d&#x27;e &#xe9;",
            "a&amp;b&lt;c&gt;&quot;d&#39;e &#233;",
        ],
    );
    left(
        s,
        &[
            "a&amp;b&lt;c&gt;&quot;d&#39;f é",
            "a&#38;b&#60;c&#62;&#34;d&#39;e &#234;",
            "&amp;&lt;&gt;",
        ],
    );
}

#[test]
fn json_string_escapes_slash_unicode_in_either_case_gos_html_safe_form_and_twice() {
    let s = "p\"w\\/é😀\u{1}<&";
    caught(
        s,
        &[
            "p\\\"w\\\\/é😀\\u0001<&",
            "p\\\"w\\\\\\/é😀\\u0001<&",
            "p\\\"w\\\\/\\u00e9\\ud83d\\ude00\\u0001<&",
            "p\\\"w\\\\/\\u00E9\\uD83D\\uDE00\\u0001<&",
            "p\\\"w\\\\\\/\\u00e9\\ud83d\\ude00\\u0001<&",
            "p\\\"w\\\\/é😀\\u0001\\u003c\\u0026",
        ],
    );
    left(s, &["p\\\"w\\\\/\\u00e8\\ud83d\\ude00\\u0001<&", "\\u00e9\\ud83d"]);
    // JSON the page kept (localStorage) inside JSON a tool returns (a storage state): escaped twice.
    let kept = serde_json::json!({ "pw": s }).to_string();
    let state = serde_json::json!({ "value": kept }).to_string();
    let expected = serde_json::json!({ "value": serde_json::json!({ "pw": "***" }).to_string() }).to_string();
    assert_eq!(scrubbed(s, &state), expected);
}

#[test]
fn base64_alone_and_at_each_offset_inside_a_larger_blob_in_both_alphabets() {
    let pw = "Tr0ub4dor&3/x";
    // HTTP Basic `jane:<pw>`: the group holding `e:T` mixes the two and stays.
    assert_eq!(
        scrubbed(pw, "Authorization: Basic amFuZTpUcjB1YjRkb3ImMy94"),
        "Authorization: Basic amFuZTpU***"
    );
    for (blob, expected) in [
        ("VHIwdWI0ZG9yJjMveA==", "***"),
        ("VHIwdWI0ZG9yJjMveCE=", "***eCE="),
        ("YVRyMHViNGRvciYzL3g=", "YVRy***"),
        ("YWJUcjB1YjRkb3ImMy94IQ==", "YWJU***IQ=="),
    ] {
        assert_eq!(scrubbed(pw, blob), expected, "{blob}");
    }
    let v = "s3cr3t?>>~~é";
    for (blob, expected) in [
        ("czNjcjN0Pz4+fn7DqQ==", "***"),
        ("czNjcjN0Pz4-fn7DqQ==", "***"),
        ("czNjcjN0Pz4-fn7DqQ", "***"),
        ("dTpzM2NyM3Q/Pj5+fsOp", "dTpz***"),
        ("dTpzM2NyM3Q_Pj5-fsOp", "dTpz***"),
        ("eHMzY3IzdD8+Pn5+w6k=", "eHMz***"),
        ("eHMzY3IzdD8-Pn5-w6k", "eHMz***"),
        // In a cookie (`encodeURIComponent(btoa(..))`) and in JSON with `\/`.
        ("czNjcjN0Pz4%2Bfn7DqQ%3D%3D", "***"),
        ("dTpzM2NyM3Q\\/Pj5+fsOp", "dTpz***"),
    ] {
        assert_eq!(scrubbed(v, blob), expected, "{blob}");
    }
    // Controls: one byte changed in the middle, and a value too short for a stable middle of 8
    // characters (`abc12`, whose base64 is `YWJjMTI=`) are left alone.
    left(pw, &["VHIwdWI0ZFhyJjMveA==", "Basic amFuZTpUcjB1YjRkWHImMy94"]);
    left("abc12", &["YWJjMTI=", "token YWJjMTI"]);
}

#[test]
fn a_secret_has_a_bounded_number_of_forms_none_shorter_than_four_characters() {
    // Every character an encoder changes: the worst case for the automaton's size.
    let nasty = "q &/+=?#%\"'<>é中😀\\`{}|^[]k".repeat(2);
    let all = forms(&nasty);
    assert!(all.len() < 400, "{} forms", all.len());
    eprintln!(
        "{} forms of a {}-character value of every special character",
        all.len(),
        nasty.chars().count()
    );
    assert!(all.iter().all(|f| f.chars().count() >= super::SHORTEST), "{all:?}");
    // A plain value has a few (its case forms, base64), a password a few dozen.
    let plain = forms("hunter2plain");
    assert!(plain.len() < 20, "{plain:?}");
    let password = forms("Tr0ub4dor&3/x");
    assert!(password.len() < 50, "{}: {password:?}", password.len());
    // Control: a value's own forms hold the value, and its encodings.
    assert!(all.contains(&nasty) && all.iter().any(|f| f.contains("%F0%9F%98%80")));
}
