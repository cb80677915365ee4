use std::path::Path;

use serde_json::json;

use super::model::{ArgType, Skip, StepKind, ToolCall};
use super::parse::parse_trail;
use super::*;
use crate::yaml::{Pos, YamlError};

fn parse(text: &str) -> Trail {
    parse_trail(text, Path::new("t.trail.yaml")).unwrap_or_else(|errs| panic!("{}", show(&errs)))
}

fn errors(text: &str) -> Vec<YamlError> {
    match parse_trail(text, Path::new("t.trail.yaml")) {
        Ok(_) => panic!("expected errors"),
        Err(errs) => errs,
    }
}

fn show(errs: &[YamlError]) -> String {
    errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}

fn at(line: usize, col: usize) -> Pos {
    Pos { line, col }
}

/// The example of DESIGN.md "Trails".
const DESIGN_EXAMPLE: &str = r#"config:
  id: demo/sign-in
  target: demo
  description: Sign in with the test account
  tags: [smoke]
  skip: "reason"
trailhead:
  step: Launch the app
  recording:
    tools:
      - launchApp: { appId: com.example.demo }
trail:
  - step: Sign in
    recording:
      tools:
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { hintTextRegex: Email } }
        - inputText: { text: "jane@example.com" }
  - verify: The inbox is shown
    recording:
      android:
        - assertVisibleBySelector:
            nodeSelector: { androidAccessibility: { textRegex: Inbox } }
  - step: A step with no recording yet is run by the agent, or reported as not recorded
"#;

#[test]
fn the_design_example_parses() {
    let t = parse(DESIGN_EXAMPLE);
    assert_eq!(t.config.id.as_deref(), Some("demo/sign-in"));
    assert_eq!(t.config.target.as_deref(), Some("demo"));
    assert_eq!(t.config.tags, vec!["smoke"]);
    assert_eq!(t.config.skip, Some(Skip::Always("reason".into())));
    assert_eq!(t.config.skip_reason("android", None), Some("reason"));

    let head = t.trailhead.as_ref().unwrap();
    assert_eq!(
        (head.number, head.kind, head.label()),
        (0, StepKind::Step, "trailhead".to_string())
    );
    let launch = &head.calls_for("android", None).unwrap()[0];
    assert_eq!(launch.tool, "launchApp");
    assert_eq!(launch.args, json!({"appId": "com.example.demo"}));
    assert_eq!(launch.pos, at(11, 9));
    assert_eq!(launch.path, "trailhead.recording.tools[0].launchApp");

    let numbers: Vec<_> = t.steps.iter().map(|s| (s.number, s.kind)).collect();
    assert_eq!(
        numbers,
        vec![(1, StepKind::Step), (2, StepKind::Verify), (3, StepKind::Step)]
    );
    assert_eq!(t.steps[0].pos, at(13, 5));
    let calls = t.steps[0].calls_for("ios", None).unwrap();
    assert_eq!(
        calls.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>(),
        ["tapOnElementBySelector", "inputText"]
    );
    assert_eq!(calls[1].args, json!({"text": "jane@example.com"}));
    // `android` only: an iOS device has nothing recorded for the verify step.
    assert!(t.steps[1].calls_for("android", None).is_some());
    assert!(t.steps[1].calls_for("ios", None).is_none());
    assert!(t.steps[2].recording.is_none());
    assert_eq!(t.all_steps().count(), 4);
    assert_eq!(t.calls().count(), 4);
}

/// A trail as Trailblaze writes them, with every key the format has.
const TRAILBLAZE_TRAIL: &str = r#"config:
  id: checkout/refund-partial
  target: demo
  title: Refund part of a sale
  description: Refunds one item of a two-item sale
  priority: P1
  devices:
    android: ANDROID_ONDEVICE_ACCESSIBILITY
    pixel-tablet: ANDROID_ONDEVICE_INSTRUMENTATION
  skip:
    ios: "blocked on #123"
  tags: [refunds, smoke]
  context: The merchant has one open sale.
  memory:
    accountTier: 5
    email: jane@example.com
  metadata:
    source: HANDWRITTEN
    caseId: 4711
  args:
    recipient: string
    retries: { type: integer, default: 3, description: How often to retry }
    verbose: { type: boolean, default: false, required: false }
trailhead:
  step: Launch the app signed in
  recording:
    tools:
      signIn: { account: demo }
trail:
  - step: Open the first message
    recordable: true
    maxRetries: 2
    recording:
      tools:
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { resourceIdRegex: ".*:id/message1" } }
      android:
        - tapOnElementBySelector:
            nodeSelector: { androidAccessibility: { contentDescriptionRegex: Message from Ana Lima } }
            reason: the row, by its description
      pixel-tablet:
        - tapOnPoint: { x: 540, y: 900 }
      web: []
  - verify: The message is shown
    recording:
      ios:
        assertVisibleBySelector:
          nodeSelector: { androidAccessibility: { textRegex: Quarterly report } }
  - step: Decide whether the refund needs approval
    recordable: false
  - verify: The refund is listed
"#;

#[test]
fn a_realistic_trailblaze_trail_with_every_key_parses() {
    let t = parse(TRAILBLAZE_TRAIL);
    let c = &t.config;
    assert_eq!(c.title.as_deref(), Some("Refund part of a sale"));
    assert_eq!(c.priority.as_deref(), Some("P1"));
    assert_eq!(c.context.as_deref(), Some("The merchant has one open sale."));
    assert_eq!(c.driver("pixel-tablet"), Some("ANDROID_ONDEVICE_INSTRUMENTATION"));
    assert_eq!(c.skip_reason("ios", None), Some("blocked on #123"));
    assert_eq!(c.skip_reason("android", Some("pixel-tablet")), None);
    assert_eq!(c.tags, ["refunds", "smoke"]);
    // Memory and metadata values are text, as Trailblaze reads them.
    assert_eq!(
        c.memory,
        [
            ("accountTier".into(), "5".into()),
            ("email".into(), "jane@example.com".into())
        ]
    );
    assert_eq!(c.metadata[1], ("caseId".into(), "4711".into()));
    let args: Vec<_> = c.args.iter().map(|a| (a.name.as_str(), a.ty, a.required())).collect();
    assert_eq!(
        args,
        [
            ("recipient", ArgType::String, true),
            ("retries", ArgType::Integer, false),
            ("verbose", ArgType::Boolean, false)
        ]
    );
    assert_eq!(c.args[1].default, Some(json!(3)));

    // The single-call form reads as a one-call list.
    let head = t.trailhead.as_ref().unwrap();
    assert_eq!(head.calls_for("web", None).unwrap()[0].tool, "signIn");
    assert_eq!(
        head.calls_for("web", None).unwrap()[0].path,
        "trailhead.recording.tools.signIn"
    );

    let open = &t.steps[0];
    assert_eq!((open.recordable, open.max_retries), (Some(true), Some(2)));
    let first_tool = |platform, key| open.calls_for(platform, key).map(|c: &[ToolCall]| c[0].tool.clone());
    // Device key over platform over `tools`; an empty list is a deliberate no-op, not "nothing".
    assert_eq!(
        first_tool("android", Some("pixel-tablet")).as_deref(),
        Some("tapOnPoint")
    );
    assert_eq!(
        open.calls_for("android", None).unwrap()[0].args["reason"],
        "the row, by its description"
    );
    assert_eq!(first_tool("ios", None).as_deref(), Some("tapOnElementBySelector"));
    assert_eq!(open.calls_for("web", None), Some(&[][..]));
    assert_eq!(
        open.recording.as_ref().unwrap().keys().collect::<Vec<_>>(),
        ["tools", "android", "pixel-tablet", "web"]
    );
    assert_eq!(t.steps[1].calls_for("ios", None).unwrap().len(), 1);
    assert_eq!(t.steps[2].recordable, Some(false));
    assert_eq!((t.steps[3].kind, t.steps[3].number), (StepKind::Verify, 4));
}

#[test]
fn scalars_keep_their_quote_style_in_tool_args() {
    let t = parse(
        "trail:\n  - step: Type\n    recording:\n      tools:\n        - inputText: { text: '12345678' }\n        - inputText: { text: 12345678 }\n        - inputText: { text: 'true' }\n        - inputText: { text: true }\n        - inputText: { text: \"1.5\" }\n        - pressKey:\n",
    );
    let args: Vec<_> = t.calls().map(|(_, _, c)| c.args.clone()).collect();
    assert_eq!(
        args,
        [
            json!({"text": "12345678"}),
            json!({"text": 12345678}),
            json!({"text": "true"}),
            json!({"text": true}),
            json!({"text": "1.5"}),
            json!({}),
        ]
    );
}

#[test]
fn an_unknown_key_points_at_the_key_and_names_the_nearest() {
    let errs = errors("trail:\n  - verfy: The inbox is shown\n");
    assert_eq!(errs.len(), 1, "{}", show(&errs));
    assert_eq!(errs[0].pos, at(2, 5));
    assert!(
        errs[0]
            .message
            .starts_with("unknown key `trail[0].verfy`; did you mean `verify`?"),
        "{}",
        errs[0]
    );
    let shown = errs[0].to_string();
    assert!(shown.starts_with("t.trail.yaml:2:5: unknown key"), "{shown}");
    assert!(shown.contains("2 |   - verfy: The inbox is shown"), "{shown}");
    assert!(shown.ends_with("|     ^"), "{shown}");
}

#[test]
fn mis_nested_keys_say_where_they_belong() {
    let errs = errors(
        r#"config:
  id: x
  platform: android
recording:
  tools: []
trail:
  - step: Tap
    tools:
      - launchApp: { appId: a }
    recording:
      tools:
        - tapOnElementBySelector:
          nodeSelector: { androidAccessibility: { textRegex: Inbox } }
      andriod: []
      launchApp: { appId: a }
"#,
    );
    let got: Vec<_> = errs.iter().map(|e| (e.pos.line, e.pos.col)).collect();
    assert_eq!(
        got,
        [(3, 3), (4, 1), (8, 5), (13, 11), (14, 7), (15, 7)],
        "{}",
        show(&errs)
    );
    assert!(
        errs[0]
            .message
            .contains("`config.platform`; pin a driver per device with `devices"),
        "{}",
        errs[0]
    );
    assert!(
        errs[1]
            .message
            .contains("`recording`; it belongs inside a step of `trail`"),
        "{}",
        errs[1]
    );
    assert!(
        errs[2]
            .message
            .contains("`trail[0].tools`; it belongs under the step's `recording`"),
        "{}",
        errs[2]
    );
    assert!(
        errs[3]
            .message
            .contains("`nodeSelector` stands beside `tapOnElementBySelector`"),
        "{}",
        errs[3]
    );
    assert!(
        errs[3].message.contains("indent it under `tapOnElementBySelector:`"),
        "{}",
        errs[3]
    );
    assert!(
        errs[4]
            .message
            .contains("`trail[0].recording.andriod`; did you mean `android`?"),
        "{}",
        errs[4]
    );
    assert!(
        errs[5].message.contains("a device key declared in `config.devices`"),
        "{}",
        errs[5]
    );
}

#[test]
fn every_error_of_a_file_comes_back_in_file_order() {
    let errs = errors(
        "trail:\n  - step: One\n    maxRetries: many\n  - Just text\n  - step: Two\n    verify: Three\n  - recordable: true\n  - step: Four\n    recording:\n      tools:\n        - inputText: { text: a }\n          pressKey: { keyCode: ENTER }\nconfig:\n  titel: x\n  skip: ''\n",
    );
    let got: Vec<_> = errs.iter().map(|e| e.pos).collect();
    assert_eq!(
        got,
        [
            at(3, 17),
            at(4, 5),
            at(6, 5),
            at(7, 5),
            at(12, 11),
            at(14, 3),
            at(15, 9)
        ],
        "{}",
        show(&errs)
    );
    assert!(
        errs[0]
            .message
            .contains("`trail[0].maxRetries`: expected a whole number"),
        "{}",
        errs[0]
    );
    assert!(
        errs[1].message.contains("a step is a map; write `- step:"),
        "{}",
        errs[1]
    );
    assert!(errs[2].message.contains("both `step` and `verify`"), "{}", errs[2]);
    assert!(
        errs[3]
            .message
            .contains("needs `step: <what to do>` or `verify: <what to check>`"),
        "{}",
        errs[3]
    );
    assert!(errs[4].message.contains("a tool call has one key"), "{}", errs[4]);
    assert!(errs[5].message.contains("did you mean `title`?"), "{}", errs[5]);
    assert!(errs[6].message.contains("`config.skip` needs a reason"), "{}", errs[6]);
}

/// A trail of `n` steps, each a tap at `x: <its index>` (every fifth with no arguments), and an
/// unknown key in the steps `bad` names.
fn long_trail(n: usize, bad: &[usize]) -> String {
    let mut t = String::from("config:\n  id: demo/long\ntrail:\n");
    for i in 0..n {
        t.push_str(&format!("  - step: Step {i}\n"));
        if bad.contains(&i) {
            t.push_str("    recordabel: true\n");
        }
        let call = if i % 5 == 4 {
            "- back: {}".to_string()
        } else {
            format!("- tap: {{ x: {i} }}")
        };
        t.push_str(&format!("    recording:\n      tools:\n        {call}\n"));
    }
    t
}

#[test]
fn a_long_trail_read_in_two_halves_keeps_each_calls_arguments_and_every_error_in_order() {
    // 600 steps: read in halves where a second core is; 100: on one thread (the control).
    for n in [600, 100] {
        let trail = parse(&long_trail(n, &[]));
        assert_eq!(trail.steps.len(), n);
        for (i, step) in trail.steps.iter().enumerate() {
            let call = &step.recording.as_ref().expect("recorded").entries[0].1[0];
            let want = if i % 5 == 4 { json!({}) } else { json!({ "x": i }) };
            assert_eq!((step.number, &call.args), (i + 1, &want), "step {i} of {n}");
            assert_eq!(step.pos.line, 4 + 4 * i, "step {i} of {n}");
            assert_eq!(call.path, format!("trail[{i}].recording.tools[0].{}", call.tool));
        }
        let bad = [3, n - 2];
        let errs = errors(&long_trail(n, &bad));
        let got: Vec<_> = errs.iter().map(|e| e.pos).collect();
        assert_eq!(
            got,
            [at(4 + 4 * 3 + 1, 5), at(4 + 4 * (n - 2) + 2, 5)],
            "{}",
            show(&errs)
        );
        assert!(
            errs[1].message.contains(&format!("`trail[{}].recordabel`", n - 2)),
            "{}",
            errs[1]
        );
    }
}

#[test]
fn wrong_types_point_at_the_value() {
    let errs = errors("config:\n  tags: smoke\ntrail:\n  step: x\n");
    let got: Vec<_> = errs.iter().map(|e| (e.pos, e.message.as_str())).collect();
    assert_eq!(
        got,
        [
            (at(2, 9), "`config.tags`: expected a list of tags, found text"),
            (
                at(4, 3),
                "`trail`: expected a list of steps (`- step: ...`), found a map"
            ),
        ]
    );
    let errs = errors(
        "trail:\n  - step: x\n    recordable: 'true'\n    recording:\n      tools:\n        - inputText: hello\n",
    );
    assert_eq!(errs[0].pos, at(3, 17));
    assert!(
        errs[0].message.contains("expected true or false, found text"),
        "{}",
        errs[0]
    );
    assert_eq!(errs[1].pos, at(6, 22));
    assert!(
        errs[1].message.contains("the arguments of `inputText`, a map"),
        "{}",
        errs[1]
    );
    // Never the value itself: it may be a secret.
    assert!(!show(&errs).contains("hello: found"));
    assert!(!errs[1].message.contains("hello"), "{}", errs[1]);
}

#[test]
fn wrong_indentation_is_a_syntax_error_on_its_line() {
    let errs = errors(
        "trail:\n  - step: Sign in\n    recording:\n      tools:\n        - launchApp: {appId: a}\n       - inputText: {text: b}\n",
    );
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].pos.line, 6, "{}", errs[0]);
    let errs = errors("config:\n  id: x\n title: y\ntrail: []\n");
    assert_eq!(errs[0].pos.line, 3, "{}", errs[0]);
}

#[test]
fn the_trailhead_takes_only_step_and_recording() {
    let errs = errors("trailhead:\n  verify: Launched\n  maxRetries: 2\ntrail: []\n");
    assert_eq!(errs.len(), 2, "{}", show(&errs));
    assert!(errs[0].message.contains("the trailhead is a `step`"), "{}", errs[0]);
    assert!(
        errs[1].message.contains("only the steps of `trail` take it"),
        "{}",
        errs[1]
    );
    assert!(
        errors("trailhead:\n  recording: {}\ntrail: []\n")[0]
            .message
            .contains("trailhead needs `step")
    );
}

#[test]
fn device_keys_must_be_declared_and_recordable_false_has_no_recording() {
    // `pixle` is a near miss of the declared `pixel`, not a classifier of its own.
    let text = "config:\n  devices: { pixel: X }\ntrail:\n  - step: a\n    recording: { pixel: [], pixle: [] }\n  - step: b\n    recordable: false\n    recording: { tools: [{ pressKey: { keyCode: BACK } }] }\n";
    let errs = errors(text);
    assert_eq!(errs.len(), 2, "{}", show(&errs));
    assert_eq!(errs[0].pos, at(5, 29));
    assert!(
        errs[0].message.contains("unknown key `trail[0].recording.pixle`"),
        "{}",
        errs[0]
    );
    assert!(errs[1].message.contains("`recordable: false`"), "{}", errs[1]);
    assert!(
        errors("config:\n  devices: { tools: X }\ntrail: []\n")[0]
            .message
            .contains("cannot be a device key")
    );
}

#[test]
fn trail_args_are_checked_like_trailblaze_does() {
    let errs = errors(
        "config:\n  args:\n    a-b: string\n    n: { type: integer, default: '3' }\n    o: { type: number }\n    p: { required: false }\n    q: { default: x, required: true }\n    r: { default: null }\ntrail: []\n",
    );
    let msgs: Vec<_> = errs.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(msgs.len(), 6, "{}", show(&errs));
    assert!(msgs[0].contains("not an identifier"), "{}", msgs[0]);
    assert!(
        msgs[1].contains("expected integer (the declared type), found text"),
        "{}",
        msgs[1]
    );
    assert!(msgs[2].contains("unknown type"), "{}", msgs[2]);
    assert!(msgs[3].contains("optional only with a `default`"), "{}", msgs[3]);
    assert!(msgs[4].contains("has a default, so it is optional"), "{}", msgs[4]);
    assert!(msgs[5].contains("an argument has no null"), "{}", msgs[5]);
}

#[test]
fn files_that_are_not_trails_are_refused() {
    assert!(errors("")[0].message.contains("an empty trail file"));
    assert!(errors("- 3\n")[0].message.contains("an item of the list form"));
    assert!(errors("config: { id: x }\n")[0].message.contains("missing key `trail`"));
}

/// The companion of the strict reader: a lenient serde decode of the same file keeps quiet about a
/// stale key (it drops it), so the strictness is ours and a test can see it go.
#[test]
fn the_strict_reader_rejects_a_key_a_lenient_decode_drops() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct LenientStep {
        step: Option<String>,
        #[serde(rename = "maxRetries")]
        max_retries: Option<u32>,
    }
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct LenientTrail {
        trail: Vec<LenientStep>,
    }
    let text = "trail:\n  - step: Retry me\n    maxRetry: 3\n";
    let doc = crate::yaml::parse(text, Path::new("t.trail.yaml")).unwrap();
    let lenient: LenientTrail = serde_json::from_value(doc.value).expect("the lenient decode accepts it");
    assert_eq!(lenient.trail[0].max_retries, None, "and silently loses the setting");
    let errs = errors(text);
    assert_eq!(errs[0].pos, at(3, 5));
    assert!(errs[0].message.contains("did you mean `maxRetries`?"), "{}", errs[0]);
}

#[test]
fn findings_inside_args_are_positioned_there() {
    let t = parse(DESIGN_EXAMPLE);
    let (_, _, tap) = t.calls().nth(1).unwrap();
    let e = t.error_in_call(tap, "nodeSelector.androidAccessibility.hintTextRegex", "bad");
    assert_eq!(e.pos, at(17, 53));
    assert_eq!(t.error_in_call(tap, "nodeSelector.nope", "bad").pos, at(17, 13));
    assert_eq!(t.error_in_call(tap, "", "bad").pos, tap.pos);
}

#[test]
fn any_device_classifier_keys_a_recording_but_a_near_miss_does_not() {
    let t = parse(
        "trail:\n  - step: a\n    recording:\n      desktop: []\n      android-phone: [{ pressKey: { keyCode: BACK } }]\n      ios-iphone: []\n      tools: []\n",
    );
    let rec = t.steps[0].recording.as_ref().expect("recording");
    assert_eq!(
        rec.keys().collect::<Vec<_>>(),
        ["desktop", "android-phone", "ios-iphone", "tools"]
    );
    // On an Android device the platform's classifier wins over `tools`.
    assert_eq!(t.steps[0].calls_for("android", None).map(<[_]>::len), Some(1));
    assert_eq!(t.steps[0].calls_for("web", None).map(<[_]>::len), Some(0));
    // Near misses of known keys, and what is no classifier at all, stay errors with the fix.
    for (key, want) in [
        ("tool", "did you mean `tools`?"),
        ("andriod", "did you mean `android`?"),
        ("Tools", "did you mean `tools`?"),
        ("Mac Book", "unknown key"),
    ] {
        let errs = errors(&format!("trail:\n  - step: a\n    recording:\n      {key}: []\n"));
        assert!(errs[0].message.contains(want), "{key}: {}", errs[0]);
    }
}

#[test]
fn an_explicit_empty_recording_is_a_deliberate_no_op() {
    let t = parse("trailhead:\n  step: Already there\n  recording:\n    android: {}\ntrail: []\n");
    let head = t.trailhead.as_ref().expect("trailhead");
    assert_eq!(head.calls_for("android", None).map(<[_]>::len), Some(0));
    // Control: a map with a tool in it is the single-call form, not a no-op.
    let t = parse("trailhead:\n  step: Launch\n  recording:\n    android: { launchApp: { appId: x } }\ntrail: []\n");
    assert_eq!(
        t.trailhead
            .as_ref()
            .and_then(|h| h.calls_for("android", None))
            .map(<[_]>::len),
        Some(1)
    );
}

#[test]
fn each_call_gets_its_own_arguments_whatever_the_file_order() {
    // The arguments are moved out of the parsed document into the calls, matched by where they
    // stand: the list form may put its trailhead after its prompts, the steps read in another order
    // than the file's, and a call with no arguments stands between calls with some.
    let list = "- prompts:\n  - step: a\n    recording:\n      tools:\n        - inputText: { text: one }\n        - pressKey:\n        - inputText: { text: two, nodeSelector: { androidAccessibility: { textRegex: x } } }\n- trailhead:\n    step: start\n    recording:\n      tools:\n        - launchApp: { appId: com.x }\n- tools:\n  - tapOnPoint: { x: 1, y: 2 }\n";
    let t = parse(list);
    let got: Vec<(String, serde_json::Value)> = t.calls().map(|(_, _, c)| (c.tool.clone(), c.args.clone())).collect();
    assert_eq!(
        got,
        [
            ("launchApp".to_string(), json!({"appId": "com.x"})),
            ("inputText".to_string(), json!({"text": "one"})),
            ("pressKey".to_string(), json!({})),
            (
                "inputText".to_string(),
                json!({"text": "two", "nodeSelector": {"androidAccessibility": {"textRegex": "x"}}})
            ),
            ("tapOnPoint".to_string(), json!({"x": 1, "y": 2})),
        ]
    );
    // The current form, with device keys and the single-call form: the same, call by call.
    let current = "config:\n  devices: { pixel: android }\ntrail:\n  - step: a\n    recording:\n      android: { pressKey: { keyCode: BACK } }\n      pixel:\n        - inputText: { text: p }\n      tools:\n        - inputText: { text: t }\n";
    let t = parse(current);
    let got: Vec<(&str, serde_json::Value)> = t.calls().map(|(_, key, c)| (key, c.args.clone())).collect();
    assert_eq!(
        got,
        [
            ("android", json!({"keyCode": "BACK"})),
            ("pixel", json!({"text": "p"})),
            ("tools", json!({"text": "t"})),
        ]
    );
    // Positions still point into the file, though the document no longer holds the arguments.
    let call = t.calls().nth(1).map(|(_, _, c)| c.clone()).expect("a call");
    assert_eq!(t.error_in_call(&call, "text", "").pos, at(8, 24));
}
