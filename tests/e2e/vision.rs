//! The agent's vision: the screen's picture goes with its text to the fake OpenAI- and
//! Anthropic-compatible servers, as the wire format's own image part, decoded here and checked
//! pixel by pixel: its size, a field holding a secret painted over (against a run that typed the
//! same text as plain text), `auto` going on without pictures when a provider refuses them, `on`
//! failing, `off` sending none. No secret value nor the key in any body or output (canaries).

use crate::png_image::Png;
use base64::Engine as _;
use serde_json::{Value, json};
use trailblaze::Settings;
use trailblaze::agent::{AgentConfig, Vision};
use trailblaze::device::Bounds;
use trailblaze::report::Outcome;
use trailblaze_e2e::fake_llm::{FakeLlm, Reply, Request, Wire, dynamic, status};
use trailblaze_e2e::{CANARY, Fixture};

use super::agent::{
    API_KEY, PASSWORD, SIGN_IN, config, healed, outcomes, project, run, script_inbox_check, script_sign_in, trail,
};

/// The pixels of `png` inside `b` (device pixels on a `screen`-sized display), scaled to the picture.
pub(crate) fn region(png: &Png, b: Bounds, screen: (i32, i32)) -> Vec<[u8; 4]> {
    let sx = |v: i32| (v as f64 * f64::from(png.width) / f64::from(screen.0)) as u32;
    let sy = |v: i32| (v as f64 * f64::from(png.height) / f64::from(screen.1)) as u32;
    let mut out = Vec::new();
    // One pixel in from each edge: the edges are where scaling blends the field with its frame.
    for y in sy(b.top) + 1..sy(b.bottom).saturating_sub(1) {
        for x in sx(b.left) + 1..sx(b.right).saturating_sub(1) {
            out.push(png.px(x, y));
        }
    }
    out
}

/// The pictures in one request, in order: (media type, bytes), whatever the wire format.
pub(crate) fn images(r: &Request) -> Vec<(String, Vec<u8>)> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.decode(s).expect("base64");
    let mut out = Vec::new();
    let body = r.json();
    for m in body["messages"].as_array().into_iter().flatten() {
        for part in m["content"].as_array().into_iter().flatten() {
            match part["type"].as_str() {
                Some("image_url") => {
                    let url = part["image_url"]["url"].as_str().unwrap_or_default();
                    let (head, data) = url.split_once(',').expect("a data URL");
                    let mime = head
                        .strip_prefix("data:")
                        .and_then(|h| h.strip_suffix(";base64"))
                        .expect("data:<type>;base64");
                    out.push((mime.to_string(), b64(data)));
                }
                Some("image") => {
                    assert_eq!(part["source"]["type"], "base64");
                    let mime = part["source"]["media_type"].as_str().unwrap_or_default();
                    out.push((
                        mime.to_string(),
                        b64(part["source"]["data"].as_str().unwrap_or_default()),
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

/// The text that goes with the last user turn's picture (the same message, before the picture).
fn text_beside_image(r: &Request) -> String {
    let body = r.json();
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let with = msgs
        .iter()
        .rfind(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|p| p["type"] == "image" || p["type"] == "image_url"))
        })
        .expect("a turn with a picture");
    with["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn with_vision(mut c: AgentConfig, v: Vision) -> AgentConfig {
    c.vision = v;
    c
}

#[test]
fn a_png_of_the_screen_arrives_with_its_text_in_each_wire_format() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let f = Fixture::demo();
        let file = trail(&f, "agent", SIGN_IN);
        let fake = FakeLlm::start(wire);
        script_sign_in(&fake);
        script_inbox_check(&fake);
        let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, wire)));
        assert_eq!(
            outcomes(&out),
            [Outcome::Passed, Outcome::Passed, Outcome::Passed],
            "{wire:?}"
        );
        let requests = fake.requests();
        let first = images(&requests[0]);
        assert_eq!(first.len(), 1, "{wire:?}: one picture in the first request");
        let (mime, bytes) = &first[0];
        assert_eq!(mime, "image/png");
        let png = Png::decode(bytes);
        eprintln!(
            "{wire:?}: the first request's picture is a {}×{} PNG of {} bytes; the body {} bytes",
            png.width,
            png.height,
            bytes.len(),
            requests[0].body.len()
        );
        // The sim's 1080×2400 screen, drawn at a third: within both providers' limits as it is.
        assert_eq!((png.width, png.height), (360, 800), "{wire:?}");
        let text = text_beside_image(&requests[0]);
        assert!(
            text.contains("Objective: Sign in as jane@example.com") && text.contains("hint=\"Email\""),
            "{wire:?}: the screen's text goes with it: {text}"
        );
        // The wire format's own part, after the text.
        let body = requests[0].json();
        let user = match wire {
            Wire::OpenAi => &body["messages"][1]["content"],
            Wire::Anthropic => &body["messages"][0]["content"],
        };
        let kinds: Vec<&str> = user
            .as_array()
            .expect("parts")
            .iter()
            .filter_map(|p| p["type"].as_str())
            .collect();
        match wire {
            Wire::OpenAi => {
                assert_eq!(kinds, ["text", "image_url"]);
                assert_eq!(user[1]["image_url"]["detail"], "high");
            }
            Wire::Anthropic => assert_eq!(kinds, ["text", "image"]),
        }
        // After an action the new screen's picture goes with "The screen now", and only the latest
        // picture stays in the conversation.
        for (i, r) in requests.iter().enumerate() {
            assert_eq!(
                images(r).len(),
                1,
                "{wire:?}: request {i} holds the latest picture only"
            );
        }
        assert!(text_beside_image(&requests[1]).contains("The screen now:"), "{wire:?}");
        assert_ne!(
            images(&requests[0])[0].1,
            images(&requests[1])[0].1,
            "the screen changed"
        );
    }
}

/// The email field's bounds on the demo's sign-in screen, and the screen's size.
fn email_field(f: &Fixture) -> (Bounds, (i32, i32)) {
    let (_p, s) = f.session(Settings::default());
    s.call("launchApp", json!({ "appId": "com.example.demo" }))
        .expect("launch");
    let tree = trailblaze_e2e::device_tree(&s);
    fn find(n: &trailblaze::device::ViewNode) -> Option<Bounds> {
        if n.resource_id.as_deref().is_some_and(|r| r.ends_with(":id/email")) {
            return Some(n.bounds);
        }
        n.children.iter().find_map(find)
    }
    (find(&tree.root).expect("the email field"), (tree.width, tree.height))
}

/// One agent step that types `text` into the email field, then concludes; the second request's
/// picture (the screen after typing).
fn typed_picture(f: &Fixture, wire: Wire, text: &'static str, secrets: &[(&str, &str)]) -> (Png, Vec<Request>) {
    let file = trail(
        f,
        "typed",
        "config:\n  target: demo\ntrailhead:\n  step: Launch\n  recording:\n    tools:\n      - launchApp: { appId: com.example.demo }\ntrail:\n  - step: Type the token into the email field\n    recordable: false\n",
    );
    let fake = FakeLlm::start(wire);
    fake.push(dynamic(move |r| {
        (
            "type".into(),
            json!({ "text": text, "ref": r.ref_of("hint=\"Email\"") }),
        )
    }))
    .push(status("COMPLETED", "typed"));
    let out = run(f, &project(f, secrets), &file, Some(config(&fake, wire)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed]);
    let requests = fake.requests();
    let (_, bytes) = images(&requests[1]).pop().expect("a picture after typing");
    (Png::decode(&bytes), requests)
}

#[test]
fn a_field_holding_a_secret_is_painted_over_in_the_picture_and_shows_in_a_control_run() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let f = Fixture::demo();
        let (field, screen) = email_field(&f);
        let (masked, requests) = typed_picture(&f, wire, "{{secret:CANARY_TOKEN}}", &[("CANARY_TOKEN", CANARY)]);
        // Control: the same value typed as plain text, with no secret.
        let control_fixture = Fixture::demo();
        let (plain, _) = typed_picture(&control_fixture, wire, CANARY, &[]);
        assert_eq!((masked.width, masked.height), (plain.width, plain.height));
        let inside = region(&masked, field, screen);
        assert!(!inside.is_empty());
        let mask = trailblaze::agent::vision::MASK;
        assert!(
            inside.iter().all(|p| p[..3] == mask),
            "{wire:?}: the field is one solid mask"
        );
        let shown = region(&plain, field, screen);
        let ink = shown.iter().filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100).count();
        assert!(
            !shown.iter().all(|p| p[..3] == mask),
            "{wire:?}: control: the field is not masked when no secret was typed"
        );
        if trailblaze::reports::raster::font_faces() > 0 {
            assert!(
                ink > 20,
                "{wire:?}: control: the typed text is drawn ({ink} dark pixels)"
            );
        }
        // Outside the field the two pictures are the same pixels.
        let (sx, sy) = (
            |v: i32| (v as f64 * f64::from(plain.width) / f64::from(screen.0)) as u32,
            |v: i32| (v as f64 * f64::from(plain.height) / f64::from(screen.1)) as u32,
        );
        let mut differ_outside = 0;
        for y in 0..plain.height {
            for x in 0..plain.width {
                let near = x + 2 >= sx(field.left)
                    && x <= sx(field.right) + 2
                    && y + 2 >= sy(field.top)
                    && y <= sy(field.bottom) + 2;
                if !near && masked.px(x, y) != plain.px(x, y) {
                    differ_outside += 1;
                }
            }
        }
        assert_eq!(differ_outside, 0, "{wire:?}: only the field differs");
        // The screen's text says *** for it, and no request holds the value or the key.
        assert!(text_beside_image(&requests[1]).contains("***"));
        for r in &requests {
            assert!(!r.body.contains(CANARY) && !r.body.contains(API_KEY), "{wire:?}");
        }
        let everything = f.all_output();
        assert!(!everything.contains(CANARY) && !everything.contains(API_KEY));
        assert!(everything.contains("fake-model"), "control: the outputs were read");
    }
}

#[test]
fn no_secret_nor_key_reaches_a_body_an_output_or_a_recording_with_pictures_on() {
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let project = project(&f, &[("CANARY_TOKEN", CANARY)]);
    let fake = FakeLlm::start(Wire::Anthropic);
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let out = run(
        &f,
        &project,
        &file,
        Some(with_vision(config(&fake, Wire::Anthropic), Vision::On)),
    );
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    let requests = fake.requests();
    assert!(requests.iter().all(|r| images(r).len() == 1), "pictures were sent");
    for r in &requests {
        for value in [CANARY, PASSWORD, API_KEY] {
            assert!(!r.body.contains(value), "a body holds a secret or the key");
        }
    }
    let mut everything = f.all_output();
    everything.push_str(&std::fs::read_to_string(healed(&file)).expect("the recording"));
    for value in [CANARY, PASSWORD, API_KEY] {
        assert!(!everything.contains(value), "an output holds a secret or the key");
    }
    // Control: the key went, in its header; the recording holds the placeholder.
    assert_eq!(requests[0].header("x-api-key"), Some(API_KEY));
    assert!(everything.contains("{{secret:DEMO_PASSWORD}}"));
}

/// A 400 as a provider without vision answers a picture.
fn refuse_image() -> Reply {
    Reply::Raw {
        status: 400,
        headers: Vec::new(),
        body: json!({ "error": { "message": "image input is not supported by this model" } }).to_string(),
    }
}

#[test]
fn auto_goes_on_with_text_when_pictures_are_refused_on_fails_off_sends_none() {
    // auto: the refused request is sent again without its picture, and no later one has one.
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(refuse_image());
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let out = run(&f, &project(&f, &[]), &file, Some(config(&fake, Wire::OpenAi)));
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    let requests = fake.requests();
    assert_eq!(images(&requests[0]).len(), 1, "the first try had a picture");
    assert!(
        requests[1..].iter().all(|r| images(r).is_empty()),
        "none after the refusal"
    );
    let body: Value = requests[1].json();
    assert!(
        body["messages"][1]["content"]
            .as_str()
            .is_some_and(|t| t.contains("Objective:")),
        "the same turn, as text"
    );
    // on: the refusal is the step's error.
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::OpenAi);
    fake.push(refuse_image());
    let out = run(
        &f,
        &project(&f, &[]),
        &file,
        Some(with_vision(config(&fake, Wire::OpenAi), Vision::On)),
    );
    assert_eq!(outcomes(&out)[1], Outcome::Failed);
    let error = out.report.trails[0].steps[1].error.clone().unwrap_or_default();
    assert!(
        error.contains("HTTP 400") && error.contains("image input is not supported"),
        "{error}"
    );
    assert_eq!(fake.requests().len(), 1, "not sent again");
    // off: no picture at all, the user turn plain text.
    let f = Fixture::demo();
    let file = trail(&f, "agent", SIGN_IN);
    let fake = FakeLlm::start(Wire::OpenAi);
    script_sign_in(&fake);
    script_inbox_check(&fake);
    let out = run(
        &f,
        &project(&f, &[]),
        &file,
        Some(with_vision(config(&fake, Wire::OpenAi), Vision::Off)),
    );
    assert_eq!(outcomes(&out), [Outcome::Passed, Outcome::Passed, Outcome::Passed]);
    assert!(fake.requests().iter().all(|r| images(r).is_empty()));
    assert!(fake.requests()[0].json()["messages"][1]["content"].is_string());
}

/// Types `text` into the email field (recorded), then judges the screen with `assertWithAi`; the
/// judge's one request.
fn judged_request(f: &Fixture, wire: Wire, text: &str, secrets: &[(&str, &str)], vision: Vision) -> Request {
    let file = trail(
        f,
        "judged",
        &format!(
            "config:\n  target: demo\ntrailhead:\n  step: Launch\n  recording:\n    tools:\n      - launchApp: {{ appId: com.example.demo }}\ntrail:\n  - step: Type into the email field\n    recording:\n      tools:\n        - inputText:\n            text: \"{text}\"\n            nodeSelector: {{ androidAccessibility: {{ hintTextRegex: Email }} }}\n  - verify: The email field is filled\n    recording:\n      tools:\n        - assertWithAi: {{ prompt: \"The email field is filled\" }}\n"
        ),
    );
    let fake = FakeLlm::start(wire);
    fake.push(trailblaze_e2e::fake_llm::call(
        "verdict",
        json!({ "holds": true, "explanation": "it is" }),
    ));
    let mut opts = trailblaze::RunOptions {
        out: f.out(),
        ..trailblaze::RunOptions::default()
    };
    let cfg = with_vision(config(&fake, wire), vision);
    let project = project(f, secrets);
    trailblaze::agent::for_run(&project, None, Some(&cfg), &mut opts);
    let out = trailblaze::run_trails(&project, &[file], &opts, &mut ()).expect("runs");
    assert_eq!(outcomes(&out), vec![Outcome::Passed; 3], "{wire:?}");
    let mut requests = fake.requests();
    assert_eq!(requests.len(), 1, "one question");
    requests.remove(0)
}

#[test]
fn the_judge_sees_the_picture_with_a_secret_field_painted_over_and_none_when_vision_is_off() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let f = Fixture::demo();
        let (field, screen) = email_field(&f);
        let masked = judged_request(
            &f,
            wire,
            "{{secret:CANARY_TOKEN}}",
            &[("CANARY_TOKEN", CANARY)],
            Vision::Auto,
        );
        let pictures = images(&masked);
        assert_eq!(
            pictures.len(),
            1,
            "{wire:?}: the question goes with the screen's picture"
        );
        assert!(text_beside_image(&masked).contains("Statement: The email field is filled"));
        let masked_png = Png::decode(&pictures[0].1);
        let mask = trailblaze::agent::vision::MASK;
        assert!(
            region(&masked_png, field, screen).iter().all(|p| p[..3] == mask),
            "{wire:?}: the secret's field is one solid mask"
        );
        assert!(!masked.body.contains(CANARY) && !masked.body.contains(API_KEY));
        // Control: the same text typed plainly is not painted over.
        let control = Fixture::demo();
        let plain = judged_request(&control, wire, CANARY, &[], Vision::Auto);
        let plain_png = Png::decode(&images(&plain)[0].1);
        assert!(
            !region(&plain_png, field, screen).iter().all(|p| p[..3] == mask),
            "{wire:?}: control: no secret, no mask"
        );
        // off: the question is the screen's text alone.
        let off = Fixture::demo();
        let text_only = judged_request(&off, wire, "plain", &[], Vision::Off);
        assert!(images(&text_only).is_empty(), "{wire:?}: no picture with vision off");
        let everything = f.all_output();
        assert!(!everything.contains(CANARY) && !everything.contains(API_KEY));
    }
}

/// The boxes of `ids` on the fixture site's `page` at the web device's default viewport, each
/// (left, top, right, bottom) in CSS pixels, and the viewport's width.
fn web_boxes(page: &str, ids: &[&str]) -> (Vec<[f64; 4]>, f64) {
    let w = crate::web::Web::at(page);
    let script = format!(
        "JSON.stringify([innerWidth, {}])",
        ids.iter()
            .map(|id| format!(
                "(r => [r.left, r.top, r.right, r.bottom])(document.getElementById('{id}').getBoundingClientRect())"
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let v: Vec<Value> = serde_json::from_str(&w.eval(&script)).expect("boxes");
    let boxes = v[1..]
        .iter()
        .map(|b| {
            let n = |i: usize| b[i].as_f64().expect("a number");
            [n(0), n(1), n(2), n(3)]
        })
        .collect();
    (boxes, v[0].as_f64().expect("innerWidth"))
}

/// The pixels of `png` inside `b` (CSS pixels on a `width`-wide page), three in from each edge.
fn web_region(png: &Png, b: [f64; 4], width: f64) -> Vec<[u8; 4]> {
    let s = |v: f64| (v * f64::from(png.width) / width) as u32;
    let mut out = Vec::new();
    for y in s(b[1]) + 3..s(b[3]).saturating_sub(3) {
        for x in s(b[0]) + 3..s(b[2]).saturating_sub(3) {
            out.push(png.px(x, y));
        }
    }
    assert!(out.len() > 50, "the field is {} pixels in the picture", out.len());
    out
}

/// Whether `pixels` are one solid mask: the agent's paint, or the web device's own box (`#444`).
fn masked(pixels: &[[u8; 4]]) -> bool {
    let solid = pixels[0];
    pixels.iter().all(|p| *p == solid) && (solid[..3] == trailblaze::agent::vision::MASK || solid[..3] == [0x44; 3])
}

/// On `--device web` the agent gets the page's screenshot, the field it typed a secret into masked
/// (and a field holding plain text shown, the control), and `assertWithAi` judges the page from
/// its text and picture (the run's one agent judges too).
/// The fixture signs in only with the real secret, so the judge's screen saying "Welcome, Jane"
/// shows the value reached the page while no body nor output holds it.
#[test]
fn on_the_web_the_agent_and_the_judge_see_the_page_with_a_secret_field_masked() {
    use trailblaze::device::spec::{DeviceSpec, WebOptions};
    trailblaze_e2e::web_site::require_chromium();
    let password = crate::web::PASSWORD;
    let (boxes, width) = web_boxes("form.html", &["email", "password"]);
    let site = trailblaze_e2e::web_site::Site::start();
    let f = Fixture::new("webtest");
    let file = f.dir.path().join("vision.trail.yaml");
    std::fs::write(
        &file,
        format!(
            "config:\n  id: web/vision\n  devices: {{ web: chromium }}\ntrail:\n  - step: Open the sign-in page\n    recording:\n      web:\n        - web_navigate: {{ url: \"{}\" }}\n  - step: Sign in as jane@example.com with the password\n    recordable: false\n  - verify: Jane is welcomed\n    recording:\n      web:\n        - assertWithAi: {{ prompt: \"The page welcomes Jane\" }}\n",
            site.url("form.html")
        ),
    )
    .expect("trail");
    let agent = FakeLlm::start(Wire::OpenAi);
    agent
        .push(dynamic(|r| {
            (
                "type".into(),
                json!({ "text": "jane@example.com", "ref": r.ref_of("textbox \"Email\"") }),
            )
        }))
        .push(dynamic(|r| {
            (
                "type".into(),
                json!({ "text": "{{secret:PW}}", "ref": r.ref_of("textbox \"Password\"") }),
            )
        }))
        .push(dynamic(|r| {
            ("tap".into(), json!({ "ref": r.ref_of("button \"Sign in\"") }))
        }))
        .push(status("COMPLETED", "signed in"))
        .push(trailblaze_e2e::fake_llm::call(
            "verdict",
            json!({ "holds": true, "explanation": "it says Welcome, Jane" }),
        ));
    let mut opts = trailblaze::RunOptions {
        out: f.out(),
        device: DeviceSpec::Web(WebOptions::default()),
        ..trailblaze::RunOptions::default()
    };
    let cfg = config(&agent, Wire::OpenAi);
    let project = project(&f, &[("PW", password)]);
    trailblaze::agent::for_run(&project, Some(&cfg), None, &mut opts);
    let out = trailblaze::run_trails(&project, &[file], &opts, &mut ()).expect("runs");
    assert_eq!(
        outcomes(&out),
        [Outcome::Passed, Outcome::Passed, Outcome::Passed],
        "{:?}",
        out.report.trails[0].steps
    );
    let mut requests = agent.requests();
    assert_eq!(requests.len(), 5, "four turns, then the judge's question");
    let asked = requests.split_off(4);
    // The picture after the password was typed: the page's screenshot at the provider's size.
    let (mime, bytes) = images(&requests[2]).pop().expect("a picture after typing the password");
    assert_eq!(mime, "image/png");
    let png = Png::decode(&bytes);
    let shape = f64::from(png.height) / f64::from(png.width);
    assert!((shape - 800.0 / 1280.0).abs() < 0.01, "the viewport's shape: {shape}");
    assert!(
        masked(&web_region(&png, boxes[1], width)),
        "the password field is one solid mask"
    );
    // Control: the email field, holding plain text, shows its background and its text.
    let email = web_region(&png, boxes[0], width);
    let light = email.iter().filter(|p| p[0] > 200 && p[1] > 200 && p[2] > 200).count();
    let dark = email.iter().filter(|p| p[0] < 120 && p[1] < 120 && p[2] < 120).count();
    assert!(
        light > 0 && dark > 0,
        "the email field's background ({light}) and text ({dark})"
    );
    // The judge got the page's text and picture, the field still masked, and Jane welcomed.
    let seen = text_beside_image(&asked[0]);
    assert!(
        seen.contains("Statement: The page welcomes Jane") && seen.contains("Welcome, Jane"),
        "{seen}"
    );
    let (_, bytes) = images(&asked[0]).pop().expect("the judge's picture");
    let judged = Png::decode(&bytes);
    assert!(
        masked(&web_region(&judged, boxes[1], width)),
        "the judge's picture masks the field"
    );
    for r in requests.iter().chain(&asked) {
        assert!(
            !r.body.contains(password) && !r.body.contains(API_KEY),
            "a body holds the secret or the key"
        );
    }
    let everything = f.all_output();
    assert!(!everything.contains(password) && !everything.contains(API_KEY));
    assert!(everything.contains("fake-model"), "control: the outputs were read");
}
