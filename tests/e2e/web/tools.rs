//! Every `web_*` tool on the fixture site: a success and a failure each, and the selector fields.

use std::time::Duration;

use serde_json::json;

use super::Web;

#[test]
fn navigate_goes_to_urls_and_relative_paths_and_through_history() {
    let w = Web::at("index.html");
    // A relative path resolves against the trail's folder and is served from its workspace.
    let msg = w.ok("web_navigate", json!({ "url": "form.html" }));
    assert!(msg.contains("form.html"), "{msg}");
    w.ok("web_verifyTextVisible", json!({ "text": "Sign in" }));
    let back = w.ok("web_navigate", json!({ "action": "BACK" }));
    assert!(back.contains("index.html"), "{back}");
    let fwd = w.ok("web_navigate", json!({ "action": "FORWARD" }));
    assert!(fwd.contains("form.html"), "{fwd}");
    // Failures: no URL for GOTO, a file outside the workspace, a missing file, no history forward.
    assert!(w.fails("web_navigate", json!({})).contains("`url` is required"));
    let outside = w.fails("web_navigate", json!({ "url": "../../Cargo.toml" }));
    assert!(outside.contains("outside the trail's workspace"), "{outside}");
    let abs = w.fails("web_navigate", json!({ "url": "file:///etc/passwd" }));
    assert!(abs.contains("outside the trail's workspace"), "{abs}");
    assert!(
        w.fails("web_navigate", json!({ "url": "nope.html" }))
            .contains("no such file")
    );
    assert!(
        w.fails("web_navigate", json!({ "action": "FORWARD" }))
            .contains("no browser history")
    );
}

#[test]
fn click_waits_for_enabled_and_fails_saying_what_it_saw() {
    let w = Web::at("index.html");
    w.ok("web_click", json!({ "ref": "css=#inc" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Count: 1" }));
    // Enabled now (the + click enabled it): an ARIA descriptor as the ref.
    w.ok("web_click", json!({ "ref": "button \"Decrement\"" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Count: 0" }));
    let quick = Web::new(Duration::from_millis(800));
    quick.ok("web_navigate", json!({ "url": quick.site.url("index.html") }));
    let e = quick.fails("web_click", json!({ "ref": "css=#dec" }));
    assert!(e.contains("waited") && e.contains("disabled"), "{e}");
    let e = quick.fails("web_click", json!({ "ref": "css=#nothing-here" }));
    assert!(e.contains("no element matches"), "{e}");
    let e = quick.fails("web_click", json!({ "ref": "button \"Invisible button\"" }));
    assert!(e.contains("waited"), "{e}");
    let e = quick.fails("web_click", json!({}));
    assert!(e.contains("name the element"), "{e}");
}

#[test]
fn every_selector_field_finds_its_element() {
    let w = Web::at("index.html");
    let sel = |m: serde_json::Value| json!({ "nodeSelector": { "web": m } });
    w.ok("web_click", sel(json!({ "cssSelector": "#inc" })));
    w.ok("web_click", sel(json!({ "dataTestId": "reset" })));
    w.ok(
        "web_click",
        sel(json!({ "ariaRole": "button", "ariaNameRegex": "Incr.*" })),
    );
    w.ok(
        "web_click",
        sel(json!({ "ariaDescriptorRegex": "button \"Increment\"" })),
    );
    w.ok("web_verifyTextVisible", json!({ "text": "Count: 2" }));
    w.ok(
        "web_verifyElementVisible",
        sel(json!({ "ariaRole": "heading", "headingLevel": 2 })),
    );
    w.ok(
        "web_verifyElementVisible",
        sel(json!({ "ariaRole": "listitem", "nthIndex": 2 })),
    );
    w.ok(
        "web_verifyValue",
        json!({ "nodeSelector": { "web": { "ariaRole": "listitem", "nthIndex": 2 } }, "expected": "Cherry" }),
    );
    // A relation: the list item inside the list named Fruits.
    w.ok(
        "web_verifyElementVisible",
        json!({ "nodeSelector": { "web": { "ariaNameRegex": "" , "ariaRole": "listitem" }, "childOf": { "web": { "ariaRole": "list", "ariaNameRegex": "Fruits" } } } }),
    );
    let quick = Web::new(Duration::from_millis(500));
    quick.ok("web_navigate", json!({ "url": quick.site.url("index.html") }));
    let e = quick.fails(
        "web_verifyElementVisible",
        sel(json!({ "ariaRole": "heading", "headingLevel": 5 })),
    );
    assert!(e.contains("no element matches"), "{e}");
    let e = quick.fails("web_click", sel(json!({ "cssSelector": "#[bad" })));
    assert!(e.contains("not a valid CSS selector"), "{e}");
    let e = quick.fails("web_click", sel(json!({ "ariaNameRegex": "(" })));
    assert!(e.contains("nodeSelector"), "{e}");
    let e = quick.fails("web_click", json!({ "nodeSelector": { "index": 1 } }));
    assert!(e.contains("no predicate"), "{e}");
}

#[test]
fn type_fills_and_appends_and_refuses_what_is_not_a_field() {
    let w = Web::at("index.html");
    w.ok("web_type", json!({ "ref": "textbox \"Notes\"", "text": "hello" }));
    w.ok(
        "web_type",
        json!({ "ref": "css=#notes", "text": " world", "clearFirst": false }),
    );
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#notes", "type": "VALUE", "expected": "hello world" }),
    );
    w.ok("web_type", json!({ "ref": "css=#notes", "text": "" }));
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#notes", "type": "VALUE", "expected": "" }),
    );
    let quick = Web::new(Duration::from_millis(500));
    quick.ok("web_navigate", json!({ "url": quick.site.url("index.html") }));
    let e = quick.fails("web_type", json!({ "ref": "css=#inc", "text": "x" }));
    assert!(e.contains("not editable"), "{e}");
}

#[test]
fn select_scroll_hover_and_keys() {
    let w = Web::at("index.html");
    w.ok(
        "web_selectOption",
        json!({ "ref": "combobox \"Fruit\"", "values": ["Banana"] }),
    );
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#fruit", "type": "VALUE", "expected": "b" }),
    );
    let e = w.fails("web_selectOption", json!({ "ref": "css=#fruit", "values": ["Mango"] }));
    assert!(e.contains("Mango") && e.contains("Apple"), "{e}");
    assert!(
        w.fails("web_selectOption", json!({ "ref": "css=#fruit", "values": [] }))
            .contains("empty")
    );

    w.ok("web_scroll", json!({ "ref": "region \"Scroll box\"", "amount": 120 }));
    assert_eq!(w.eval("document.getElementById('box').scrollTop > 0"), "true");
    w.ok(
        "web_scroll",
        json!({ "direction": "UP", "nodeSelector": { "web": { "cssSelector": "#box" } } }),
    );
    assert_eq!(w.eval("document.getElementById('box').scrollTop"), "0");
    w.ok("web_scroll", json!({ "amount": 50 }));
    assert_eq!(w.eval("window.scrollY > 0"), "true");

    w.ok("web_hover", json!({ "ref": "css=#hover-me" }));
    w.ok("web_verifyTextVisible", json!({ "text": "Hovered" }));

    w.ok("web_click", json!({ "ref": "css=#notes" }));
    w.ok("web_pressKey", json!({ "key": "a" }));
    w.ok("web_pressKey", json!({ "key": "Shift+B" }));
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#notes", "type": "VALUE", "expected": "aB" }),
    );
    w.ok("web_pressKey", json!({ "key": "Control+A" }));
    w.ok("web_pressKey", json!({ "key": "Backspace" }));
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#notes", "type": "VALUE", "expected": "" }),
    );
    assert!(
        w.fails("web_pressKey", json!({ "key": "Hyper+Q" }))
            .contains("not a key name")
    );

    let quick = Web::new(Duration::from_millis(500));
    quick.ok("web_navigate", json!({ "url": quick.site.url("index.html") }));
    assert!(
        quick
            .fails("web_scroll", json!({ "ref": "css=#missing" }))
            .contains("waited")
    );
    assert!(
        quick
            .fails("web_hover", json!({ "ref": "button \"Zero button\"" }))
            .contains("waited")
    );
}

#[test]
fn waits_urls_resize_snapshot_and_details() {
    let w = Web::at("index.html");
    w.ok("web_wait", json!({ "seconds": 1 }));
    let e = w.fails("web_wait", json!({ "seconds": "soon" }));
    assert!(e.contains("seconds"), "{e}");
    let url = w.ok("web_currentUrl", json!({}));
    assert!(url.ends_with("/index.html"), "{url}");
    assert_eq!(w.ok("web_waitForUrl", json!({ "pattern": "index\\.html$" })), url);
    let e = w.fails("web_waitForUrl", json!({ "pattern": "dashboard", "timeoutMs": 200 }));
    assert!(e.contains("waited 200 ms") && e.contains("index.html"), "{e}");
    assert!(
        w.fails("web_waitForUrl", json!({ "pattern": "(" }))
            .contains("not a valid regular expression")
    );
    w.ok("web_resize", json!({ "width": 800, "height": 600 }));
    assert_eq!(w.eval("innerWidth + 'x' + innerHeight"), "800x600");
    assert!(
        w.fails("web_resize", json!({ "width": 0, "height": 600 }))
            .contains("1 to 10000")
    );
    assert!(
        w.ok("web_snapshot", json!({ "screenName": "home" }))
            .contains("'home' captured")
    );
    assert!(w.fails("web_snapshot", json!({ "screenName": " " })).contains("empty"));
    let details = w.ok("web_requestDetails", json!({ "include": ["BOUNDS", "CSS_SELECTORS"] }));
    assert!(details.contains("[css=#inc]") && details.contains("{x:"), "{details}");
    assert!(
        w.fails("web_requestDetails", json!({ "include": [] }))
            .contains("empty")
    );
    let e = w.fails("web_requestDetails", json!({ "include": ["COLOURS"] }));
    assert!(e.contains("include"), "{e}");
}

#[test]
fn verifications_retry_and_say_what_they_saw() {
    let w = Web::new(Duration::from_millis(600));
    w.ok("web_navigate", json!({ "url": w.site.url("index.html") }));
    w.ok("web_verifyTextVisible", json!({ "text": "fixture HOME" }));
    let e = w.fails("web_verifyTextVisible", json!({ "text": "Not on this page" }));
    assert!(e.contains("not visible") && e.contains("the page reads"), "{e}");
    w.ok("web_verifyElementVisible", json!({ "ref": "button \"Increment\"" }));
    let e = w.fails(
        "web_verifyElementVisible",
        json!({ "ref": "button \"Invisible button\"" }),
    );
    assert!(e.contains("waited"), "{e}");
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#to-form", "expected": "Sign in" }),
    );
    w.ok(
        "web_verifyValue",
        json!({ "ref": "css=#to-form", "type": "ATTRIBUTE", "attribute": "href", "expected": "form.html" }),
    );
    let e = w.fails(
        "web_verifyValue",
        json!({ "ref": "css=#to-form", "expected": "Sign out" }),
    );
    assert!(
        e.contains("does not match") && e.contains("its text is \"Sign in\""),
        "{e}"
    );
    assert!(
        w.fails(
            "web_verifyValue",
            json!({ "ref": "css=#to-form", "type": "ATTRIBUTE", "expected": "x" })
        )
        .contains("`attribute` is required")
    );
    w.ok(
        "web_verifyListVisible",
        json!({ "ref": "list \"Fruits\"", "items": ["Apple", "cherry"] }),
    );
    let e = w.fails(
        "web_verifyListVisible",
        json!({ "ref": "list \"Fruits\"", "items": ["Apple", "Durian"] }),
    );
    assert!(e.contains("missing 'Durian'"), "{e}");
}

#[test]
fn network_cookies_storage_and_evaluate() {
    let w = Web::at("index.html");
    w.ok("web_click", json!({ "ref": "css=#beacon" }));
    w.ok("web_assertNetworkEvent", json!({ "eventName": "checkout-started" }));
    // The body is searched too.
    w.ok(
        "web_assertNetworkEvent",
        json!({ "eventName": "CART=3", "timeoutMs": 0 }),
    );
    let e = w.fails(
        "web_assertNetworkEvent",
        json!({ "eventName": "never-sent", "timeoutMs": 200 }),
    );
    assert!(e.contains("not found") && e.contains("requests"), "{e}");
    assert!(
        w.fails("web_assertNetworkEvent", json!({ "eventName": " " }))
            .contains("empty")
    );

    let applied = w.ok(
        "web_applyCookies",
        json!({ "cookiesJson": r#"[{"name":"sid","value":"abc","path":"/"}]"# }),
    );
    assert_eq!(applied, "Applied 1 cookie(s)");
    w.ok(
        "web_applyCookies",
        json!({ "cookiesJson": r#"{"cookies":[{"name":"theme","value":"dark","sameSite":"Lax"}]}"# }),
    );
    assert!(
        w.fails("web_applyCookies", json!({ "cookiesJson": "not json" }))
            .contains("not JSON")
    );
    assert!(w.fails("web_applyCookies", json!({})).contains("required"));
    w.eval("localStorage.setItem('k', 'v'); 1");
    let state: serde_json::Value = serde_json::from_str(&w.ok("web_getStorageState", json!({}))).expect("JSON");
    let names: Vec<&str> = state["cookies"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert!(names.contains(&"sid") && names.contains(&"theme"), "{state}");
    assert_eq!(state["origins"][0]["localStorage"][0]["name"], "k");

    assert_eq!(w.eval("1 + 1"), "2");
    assert_eq!(w.eval("Promise.resolve('later')"), "later");
    let e = w.fails("web_evaluate", json!({ "script": "throw new Error('boom')" }));
    assert!(e.contains("boom"), "{e}");
}

#[test]
fn web_tools_are_refused_on_other_devices_and_phone_tools_need_no_web() {
    let f = trailblaze_e2e::Fixture::new("simweb");
    let (_p, s) = f.session(trailblaze::Settings::default());
    let e = s.call("web_currentUrl", json!({})).unwrap_err().to_string();
    assert!(e.contains("web") && e.contains("android"), "{e}");
    let e = s.call("web_getStorageState", json!({})).unwrap_err().to_string();
    assert!(e.contains("web"), "{e}");
}
