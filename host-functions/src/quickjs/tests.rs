//! The script-value path against the JSON path: the same values decode alike, the same mistakes get
//! the same messages (never the value), results read in the script as their JSON would, and what
//! JSON could not hold (a cycle, a huge sparse array) is refused.

use rquickjs::{Context, Ctx, Runtime, Value};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::decode_js;
use crate::decode::decode;

const CANARY: &str = "CANARY-7f3a9";

#[derive(Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Outer {
    name: String,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    inner: Option<Inner>,
    #[serde(default)]
    list: Vec<Inner>,
    #[serde(default)]
    mode: Option<Mode>,
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Inner {
    ratio: f64,
    #[serde(default)]
    holes: Vec<Option<i64>>,
}

#[derive(Debug, Deserialize, Serialize, PartialEq)]
enum Mode {
    Fast,
    Slow { by: u8 },
    Pair(i32, String),
}

fn with_js<R>(f: impl for<'js> FnOnce(Ctx<'js>) -> R) -> R {
    let rt = Runtime::new().expect("runtime");
    let ctx = Context::full(&rt).expect("context");
    ctx.with(f)
}

fn eval<'js>(ctx: &Ctx<'js>, src: &str) -> Value<'js> {
    ctx.eval(src).expect("evaluates")
}

/// Decodes the script expression `src` into `T` and the JSON of the same value the JSON way.
fn both<T: serde::de::DeserializeOwned>(src: &str) -> (Result<T, String>, Result<T, String>) {
    with_js(|ctx| {
        let v = eval(&ctx, &format!("({src})"));
        let json: String = ctx
            .json_stringify(v.clone())
            .expect("stringify")
            .expect("a JSON value")
            .to_string()
            .expect("text");
        let json: serde_json::Value = serde_json::from_str(&json).expect("JSON");
        (
            decode_js::<T>(&v).map_err(|e| e.to_string()),
            decode::<T>(&json).map_err(|e| e.to_string()),
        )
    })
}

#[test]
fn a_script_value_decodes_as_its_json_does() {
    let src = "{ name: 'x', count: 3.0, inner: { ratio: 0.5, holes: [1, , 3] }, list: [{ ratio: 2 }], \
               mode: { Slow: { by: 7 } }, dropped: undefined, f() {} }";
    let (js, json) = both::<Outer>(src);
    let js = js.expect("decodes");
    assert_eq!(Ok(&js), json.as_ref());
    assert_eq!(js.count, Some(3), "an integral float is an integer");
    assert_eq!(
        js.inner.as_ref().map(|i| i.holes.clone()),
        Some(vec![Some(1), None, Some(3)])
    );
    for src in [
        "{ name: 'y', mode: 'Fast' }",
        "{ name: 'z', mode: { Pair: [-1, 'a'] }, count: null }",
    ] {
        let (js, json) = both::<Outer>(src);
        assert!(js.is_ok(), "{src}: {js:?}");
        assert_eq!(js, json, "{src}");
    }
    // Anything at all, into a JSON value: the same tree.
    let (js, json) = both::<serde_json::Value>("{ a: [1, 2.5, 'x', true, null, { b: {} }], c: -7 }");
    assert_eq!(js, json);
    assert_eq!(js.expect("decodes")["a"][1], json!(2.5));
}

#[test]
fn a_mistake_gets_the_json_paths_message_and_never_the_value() {
    let cases = [
        (format!("{{ name: 'x', nmae: '{CANARY}' }}"), "unknown key `nmae`"),
        (
            format!("{{ name: 'x', list: [{{ ratio: 1 }}, {{ ratio: '{CANARY}' }}] }}"),
            "`list[1].ratio`: expected f64, found a string",
        ),
        (
            "{ count: 1, list: [{ ratio: 1, holes: [] }] }".to_string(),
            "missing required key `name`",
        ),
        (
            format!("{{ name: 'x', inner: {{ ratio: 1, holes: ['{CANARY}'] }} }}"),
            "`inner.holes[0]`: expected i64, found a string",
        ),
        (
            format!("{{ name: 'x', mode: '{CANARY}' }}"),
            "`mode`: invalid value, expected one of `Fast`, `Slow`, `Pair`",
        ),
        (
            format!("{{ name: ['{CANARY}'] }}"),
            "`name`: expected a string, found an array",
        ),
    ];
    for (src, want) in cases {
        let (js, json) = both::<Outer>(&src);
        let js = js.expect_err("refused");
        assert_eq!(Err(js.clone()), json, "{src}: the two paths agree");
        assert!(js.contains(want), "{src}: {js}");
        assert!(!js.contains(CANARY), "{js}");
    }
}

#[test]
fn what_json_could_not_hold_is_refused_by_name() {
    with_js(|ctx| {
        // A cycle: refused at the depth limit, not walked until the stack runs out.
        let cyclic = eval(&ctx, "(() => { const a = { name: 'x' }; a.self = a; return a; })()");
        let e = decode_js::<serde_json::Value>(&cyclic)
            .expect_err("a cycle")
            .to_string();
        assert!(e.contains("nested deeper than 128 levels"), "{e}");
        // Control: deep, but within the limit.
        let deep = eval(
            &ctx,
            "(() => { let a = 1; for (let i = 0; i < 100; i++) a = { a }; return a; })()",
        );
        assert!(decode_js::<serde_json::Value>(&deep).is_ok());
        // A sparse array costs nothing in JS and a value per hole here: refused by its length.
        let sparse = eval(
            &ctx,
            "(() => { const a = []; a[300000] = 1; return { name: 'x', inner: { ratio: 1, holes: a } }; })()",
        );
        let e = decode_js::<Outer>(&sparse).expect_err("too many values").to_string();
        assert!(e.contains("more than 200000 values"), "{e}");
        let dense = eval(
            &ctx,
            "({ name: 'x', inner: { ratio: 1, holes: new Array(1000).fill(2) } })",
        );
        assert_eq!(
            decode_js::<Outer>(&dense)
                .expect("decodes")
                .inner
                .map(|i| i.holes.len()),
            Some(1000)
        );
        // NaN has no JSON: refused, and the message says so.
        let nan = eval(&ctx, "({ name: 'x', inner: { ratio: NaN } })");
        let e = decode_js::<Outer>(&nan).expect_err("NaN").to_string();
        assert!(
            e.contains("`inner.ratio`: NaN or Infinity cannot cross to the host"),
            "{e}"
        );
        // A symbol is no value for the host.
        let e = decode_js::<serde_json::Value>(&eval(&ctx, "({ s: Symbol('x') })"))
            .expect_err("a symbol")
            .to_string();
        assert!(e.contains("cannot cross to the host"), "{e}");
    });
}

#[test]
fn an_object_gives_the_members_json_stringify_keeps_and_a_bad_key_or_getter_is_an_error() {
    with_js(|ctx| {
        // Only own, enumerable, string-keyed members, in their order; non-ASCII keys read whole.
        let v = eval(
            &ctx,
            "(() => { const o = Object.create({ inherited: 1 }); o.b = 1; o['é✓'] = 2; o[Symbol('s')] = 3; \
             Object.defineProperty(o, 'hidden', { value: 4, enumerable: false }); o.a = 5; return o; })()",
        );
        let js = decode_js::<serde_json::Value>(&v).expect("decodes");
        let stringified: String = ctx
            .json_stringify(v)
            .expect("stringify")
            .expect("a JSON value")
            .to_string()
            .expect("text");
        assert_eq!(js.to_string(), stringified, "the same members, the same order");
        assert_eq!(js, json!({ "b": 1, "é✓": 2, "a": 5 }));
        // A key with a lone surrogate is no text: refused by what it is, never quoted.
        let e = decode_js::<serde_json::Value>(&eval(&ctx, "({ ['\\ud800x']: 1 })"))
            .expect_err("not text")
            .to_string();
        assert!(e.contains("a key that is not valid text"), "{e}");
        // A getter that throws fails the decoding (its message is the script's, not a value).
        let e = decode_js::<Outer>(&eval(&ctx, "({ name: 'x', get count() { throw new Error('no') } })"))
            .expect_err("a throwing getter");
        assert!(!e.to_string().is_empty());
        // Control: a getter that returns is read as its value.
        let ok = decode_js::<Outer>(&eval(&ctx, "({ name: 'x', get count() { return 2 } })")).expect("decodes");
        assert_eq!(ok.count, Some(2));
        // An enum's one member, after the members JSON would skip.
        let (js, json) = both::<Outer>("{ name: 'y', mode: { Slow: { by: 1 }, gone: undefined } }");
        assert_eq!(js, json);
        assert_eq!(js.expect("decodes").mode, Some(Mode::Slow { by: 1 }));
    });
}

/// The script's `JSON.stringify` of `value` built straight in the engine, read back as JSON.
fn built<T: Serialize>(ctx: &Ctx<'_>, value: &T) -> serde_json::Value {
    let v = super::ser::to_js(ctx, value).expect("builds");
    let text = ctx
        .json_stringify(v)
        .expect("stringify")
        .expect("a JSON value")
        .to_string()
        .expect("text");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn a_result_reads_in_the_script_as_its_json() {
    #[derive(Serialize)]
    struct Wide {
        big: u64,
        neg: i64,
        not_a_number: f64,
        none: Option<u8>,
        unit: (),
        chars: char,
        tuple: (u8, &'static str),
        map: std::collections::BTreeMap<u32, bool>,
    }
    let outer = Outer {
        name: "n".into(),
        count: Some(4),
        inner: Some(Inner {
            ratio: 0.25,
            holes: vec![None, Some(-3)],
        }),
        list: vec![],
        mode: Some(Mode::Slow { by: 2 }),
    };
    let wide = Wide {
        big: 1 << 53,
        neg: -(1 << 40),
        not_a_number: f64::NAN,
        none: None,
        unit: (),
        chars: 'é',
        tuple: (1, "t"),
        map: [(1, true), (20, false)].into_iter().collect(),
    };
    with_js(|ctx| {
        let to_value = |v: serde_json::Result<serde_json::Value>| v.expect("JSON");
        assert_eq!(built(&ctx, &outer), to_value(serde_json::to_value(&outer)));
        assert_eq!(built(&ctx, &wide), to_value(serde_json::to_value(&wide)));
        assert_eq!(
            built(&ctx, &wide)["not_a_number"],
            json!(null),
            "NaN is null, as in JSON"
        );
        for mode in [Mode::Fast, Mode::Pair(9, "p".into()), Mode::Slow { by: 1 }] {
            assert_eq!(built(&ctx, &mode), to_value(serde_json::to_value(&mode)));
        }
        // Control: a JSON value builds the same object as the typed value it came from.
        let json = to_value(serde_json::to_value(&outer));
        assert_eq!(built(&ctx, &json), built(&ctx, &outer));
        assert_ne!(built(&ctx, &Mode::Fast), built(&ctx, &Mode::Slow { by: 1 }));
    });
}

#[test]
fn a_results_members_are_its_own_whatever_the_prototype_holds() {
    with_js(|ctx| {
        // A script's setter on the prototype sees nothing, and a `"__proto__"` key is a member.
        let _: Value = eval(
            &ctx,
            "Object.defineProperty(Object.prototype, 'greeting', { set(v) { globalThis.stolen = v; } })",
        );
        #[derive(Serialize)]
        struct Greeting {
            greeting: &'static str,
        }
        let v = super::ser::to_js(&ctx, &Greeting { greeting: CANARY }).expect("builds");
        ctx.globals().set("made", v).expect("set");
        let map = json!({ "__proto__": { "polluted": true }, "plain": 1 });
        let m = super::ser::to_js(&ctx, &map).expect("builds");
        ctx.globals().set("map", m).expect("set");
        let seen: String = ctx
            .eval(
                "JSON.stringify([typeof globalThis.stolen, Object.hasOwn(made, 'greeting'), made.greeting === undefined, \
                 Object.getPrototypeOf(map) === Object.prototype, Object.hasOwn(map, '__proto__'), map.polluted === undefined, \
                 JSON.stringify(map)])",
            )
            .expect("evaluates");
        assert_eq!(
            seen,
            r#"["undefined",true,false,true,true,true,"{\"__proto__\":{\"polluted\":true},\"plain\":1}"]"#
        );
        // Control: an assignment, as the result was built before, does reach the setter.
        let _: Value = eval(&ctx, "({}).greeting = 'x'");
        let stolen: String = ctx.eval("typeof globalThis.stolen").expect("evaluates");
        assert_eq!(stolen, "string");
    });
}

/// `kind` answers a plain object from its class alone: that class is `{}`'s (and `Object.create(null)`'s,
/// which is as plain), and no other kind of object has it, so nothing else is taken for a plain object.
#[test]
fn the_plain_object_class_is_only_plain_objects() {
    use super::object::{PLAIN_OBJECT_CLASS, kind};
    use rquickjs::{Type, qjs};
    with_js(|ctx| {
        let class = |src: &str| {
            let v = eval(&ctx, &format!("({src})"));
            // SAFETY: reads an object value's class; nothing is kept.
            (unsafe { qjs::JS_GetClassID(v.as_raw()) }, kind(&v))
        };
        assert_eq!(class("{}"), (PLAIN_OBJECT_CLASS, Type::Object));
        assert_eq!(class("Object.create(null)"), (PLAIN_OBJECT_CLASS, Type::Object));
        for (src, expected) in [
            ("[]", Type::Array),
            ("() => 1", Type::Function),
            ("class A {}", Type::Constructor),
            ("Promise.resolve(1)", Type::Promise),
            ("new Proxy({}, {})", Type::Proxy),
            ("new Date(0)", Type::Object),
        ] {
            let (id, k) = class(src);
            assert_ne!(id, PLAIN_OBJECT_CLASS, "{src}");
            assert_eq!(k, expected, "{src}");
        }
    })
}

/// A shape keeper has the object's members, in its order, as `undefined` (so its shape is the
/// object's): `Object.keys` and the values, against an object given them in another order.
#[test]
fn a_shape_keeper_has_the_members_in_their_order_and_no_values() {
    with_js(|ctx| {
        let check = ctx.clone();
        // A getter is a member like another, and reading keys must not run it.
        let obj = eval(
            &ctx,
            "globalThis.ran = 0; ({ b: 1, a: { deep: true }, get c() { ran++; return 'x'; } })",
        );
        let keeper = super::object::shape_keeper(obj.as_object().expect("an object"))
            .expect("no error")
            .expect("a keeper");
        check.globals().set("keeper", keeper).expect("set");
        let keys: String = check
            .eval("Object.keys(keeper).join() + ':' + Object.values(keeper).every(v => v === undefined) + ':' + ran")
            .expect("eval");
        assert_eq!(keys, "b,a,c:true:0");
        // Control: the same members in another order are told apart by the same question.
        let other: String = check.eval("Object.keys({ a: 1, b: 2, c: 3 }).join()").expect("eval");
        assert_ne!(other, "b,a,c");
    });
}

#[test]
fn a_shape_keeper_is_made_for_small_objects_only() {
    use super::object::{MAX_KEPT_MEMBERS, shape_keeper};
    with_js(|ctx| {
        let at_cap = eval(
            &ctx,
            &format!("Object.fromEntries(Array.from({{ length: {MAX_KEPT_MEMBERS} }}, (_, i) => ['k' + i, i]))"),
        );
        let over = eval(
            &ctx,
            &format!(
                "Object.fromEntries(Array.from({{ length: {} }}, (_, i) => ['k' + i, i]))",
                MAX_KEPT_MEMBERS + 1
            ),
        );
        let kept = |v: &Value| {
            shape_keeper(v.as_object().expect("an object"))
                .expect("no error")
                .is_some()
        };
        assert!(kept(&at_cap));
        assert!(!kept(&over));
    });
}
