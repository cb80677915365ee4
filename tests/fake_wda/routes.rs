//! WDA's routes (FBSessionCommands.m, FBCustomCommands.m, FBElementCommands.m, ...) on the fake
//! phone: every answer `{"value": ..., "sessionId": ...}`, errors W3C-shaped.

use serde_json::{Map, Value, json};

use super::Shared;
use super::actions::{Gesture, gestures};
use super::http::{Incoming, query_param};
use super::phone::{Phone, Session, WdaError};

type Reply = Result<Value, WdaError>;

/// The iOS version the fake reports.
const IOS: &str = "17.5";

/// The HTTP status and JSON body answering `req`.
pub fn answer(shared: &Shared, req: &Incoming) -> (u16, String) {
    let mut phone = shared.phone();
    let body = if req.body.trim().is_empty() {
        Ok(json!({}))
    } else {
        serde_json::from_str::<Value>(&req.body)
            .map_err(|e| WdaError::invalid_argument(format!("the request body is not JSON: {e}")))
    };
    let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
    let reply = body.and_then(|body| {
        route(shared, &mut phone, &req.method, &segs, &req.query, &body).unwrap_or_else(|| {
            Err(WdaError::new(
                404,
                "unknown command",
                format!("Unhandled endpoint: {} with parameters {}", req.path, req.body),
            ))
        })
    });
    let session_id = phone.session.as_ref().map_or(Value::Null, |s| json!(s.id));
    match reply {
        Ok(value) => (200, json!({"value": value, "sessionId": session_id}).to_string()),
        Err(e) => {
            let value = json!({"error": e.error, "message": e.message, "traceback": ""});
            (e.status, json!({"value": value, "sessionId": session_id}).to_string())
        }
    }
}

fn route(shared: &Shared, phone: &mut Phone, method: &str, segs: &[&str], query: &str, body: &Value) -> Option<Reply> {
    match (method, segs) {
        ("GET", ["status"]) => Some(Ok(status(shared))),
        ("POST", ["session"]) => Some(create_session(shared, phone, body)),
        (_, ["session", id, rest @ ..]) => {
            if phone.session.as_ref().map(|s| s.id.as_str()) != Some(*id) {
                return Some(Err(WdaError::new(404, "invalid session id", "Session does not exist")));
            }
            anywhere(phone, method, rest, query).or_else(|| in_session(shared, phone, method, rest, body))
        }
        _ => anywhere(phone, method, segs, query),
    }
}

fn status(shared: &Shared) -> Value {
    json!({
        "ready": true,
        "message": "WebDriverAgent is ready to accept commands",
        "state": "success",
        "os": {"name": "iOS", "version": IOS, "sdkVersion": IOS, "testmanagerdVersion": 28},
        "ios": {"simulatorVersion": IOS, "ip": null},
        "build": {"time": "Jun  3 2024 10:00:00", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner"},
        "device": "iphone",
        // Not in real WDA: the fake names its device so `ios:<udid>` can be checked.
        "udid": shared.udid,
    })
}

/// W3C `capabilities` (`alwaysMatch` merged with the first `firstMatch`) or the legacy
/// `desiredCapabilities`, with `appium:` prefixes dropped as WDA drops them.
fn capabilities(body: &Value) -> Result<Map<String, Value>, WdaError> {
    let mut caps = Map::new();
    let parts: Vec<&Value> = match (body.get("capabilities"), body.get("desiredCapabilities")) {
        (Some(c @ Value::Object(_)), _) => {
            let first = c.get("firstMatch").and_then(|f| f.get(0));
            c.get("alwaysMatch").into_iter().chain(first).collect()
        }
        (_, Some(d @ Value::Object(_))) => vec![d],
        _ => {
            return Err(WdaError::new(
                500,
                "session not created",
                "'capabilities' is mandatory to create a new session",
            ));
        }
    };
    for (k, v) in parts.into_iter().filter_map(Value::as_object).flatten() {
        caps.insert(k.strip_prefix("appium:").unwrap_or(k).to_owned(), v.clone());
    }
    Ok(caps)
}

/// Ends the session as WDA's `kill` does: the app it launched is terminated, unless the session
/// was made with `shouldTerminateApp: false`.
fn kill(phone: &mut Phone) {
    if let Some(bundle) = phone
        .session
        .take()
        .filter(|s| s.terminate_app)
        .and_then(|s| s.bundle_id)
    {
        phone.terminate(&bundle);
    }
}

fn create_session(shared: &Shared, phone: &mut Phone, body: &Value) -> Reply {
    kill(phone);
    let caps = capabilities(body)?;
    let bundle = caps.get("bundleId").and_then(Value::as_str).map(str::to_owned);
    if let Some(b) = &bundle {
        phone.launch(b)?;
    }
    let id = phone.new_id();
    let mut session = Session::new(id.clone(), bundle);
    session.terminate_app = caps.get("shouldTerminateApp").and_then(Value::as_bool) != Some(false);
    phone.session = Some(session);
    shared
        .sessions_created
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Ok(json!({"sessionId": id, "capabilities": session_caps(phone)}))
}

fn session_caps(phone: &Phone) -> Value {
    let bundle = phone.session.as_ref().and_then(|s| s.bundle_id.clone());
    json!({"device": "iphone", "sdkVersion": IOS, "CFBundleIdentifier": bundle})
}

/// Routes WDA answers with or without a session.
fn anywhere(phone: &mut Phone, method: &str, segs: &[&str], query: &str) -> Option<Reply> {
    let s = phone.app.screen();
    let r = match (method, segs) {
        ("GET", ["source"]) => {
            let scope = query_param(query, "scope");
            let excluded = query_param(query, "excluded_attributes").unwrap_or_default();
            let excluded: Vec<&str> = excluded.split(',').map(str::trim).filter(|a| !a.is_empty()).collect();
            if query_param(query, "format").is_some_and(|f| !f.eq_ignore_ascii_case("xml")) {
                return Some(Err(WdaError::invalid_argument(
                    "the fake WDA writes the source as xml only",
                )));
            }
            Ok(json!(phone.source(scope.as_deref(), &excluded)))
        }
        ("GET", ["screenshot"]) => Ok(json!(base64(&phone.screenshot()))),
        ("GET", ["window", "size"]) => Ok(json!({"width": s.width, "height": s.height})),
        ("GET", ["wda", "screen"]) => Ok(json!({
            "screenSize": {"width": s.width, "height": s.height},
            "statusBarSize": {"width": s.width, "height": s.status_bar},
            "scale": s.scale,
        })),
        ("POST", ["wda", "homescreen"]) => {
            phone.home();
            Ok(Value::Null)
        }
        ("GET", ["wda", "healthcheck"]) => Ok(Value::Null),
        _ => return None,
    };
    Some(r)
}

fn str_arg<'a>(body: &'a Value, name: &str) -> Result<&'a str, WdaError> {
    body.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| WdaError::invalid_argument(format!("'{name}' is required")))
}

fn num_arg(body: &Value, name: &str) -> Result<f64, WdaError> {
    body.get(name)
        .and_then(Value::as_f64)
        .ok_or_else(|| WdaError::invalid_argument(format!("'{name}' must be a number")))
}

fn in_session(shared: &Shared, phone: &mut Phone, method: &str, segs: &[&str], body: &Value) -> Option<Reply> {
    let r = match (method, segs) {
        ("GET", []) => {
            Ok(json!({"sessionId": phone.session.as_ref().map(|s| s.id.clone()), "capabilities": session_caps(phone)}))
        }
        ("DELETE", []) => {
            kill(phone);
            shared
                .sessions_deleted
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(Value::Null)
        }
        ("GET", ["window", "rect"]) => {
            let s = phone.app.screen();
            Ok(json!({"x": 0, "y": 0, "width": s.width, "height": s.height}))
        }
        ("POST", ["timeouts"]) | ("DELETE", ["actions"]) => Ok(Value::Null),
        ("POST", ["url"]) => str_arg(body, "url").map(|url| {
            phone.urls.push(url.to_owned());
            if phone.process == super::phone::Process::Foreground {
                phone.app.open_url(url);
            }
            Value::Null
        }),
        ("POST", ["wda", "apps", verb]) => apps(phone, verb, body),
        ("POST", ["actions"]) => actions(phone, body),
        ("POST", ["wda", "tap"]) | ("POST", ["wda", "tap", _]) => num_arg(body, "x")
            .and_then(|x| Ok((x, num_arg(body, "y")?)))
            .map(|(x, y)| {
                phone.tap(x, y);
                Value::Null
            }),
        ("POST", ["wda", "keys"]) => match body.get("value").and_then(Value::as_array) {
            Some(keys) => {
                let text: String = keys.iter().filter_map(Value::as_str).collect();
                phone.type_keys(&text).map(|()| Value::Null)
            }
            None => Err(WdaError::invalid_argument("'value' must be an array of strings")),
        },
        ("POST", ["wda", "pressButton"]) => press_button(phone, body),
        ("POST", ["wda", "keyboard", "dismiss"]) => {
            phone.app.dismiss_keyboard();
            Ok(Value::Null)
        }
        ("POST", ["element"]) | ("POST", ["elements"]) => find(phone, segs[0] == "elements", body),
        (_, ["element", id, rest @ ..]) => return super::element_routes::route(phone, method, id, rest, body),
        _ => return None,
    };
    Some(r)
}

fn apps(phone: &mut Phone, verb: &str, body: &Value) -> Reply {
    let bundle = str_arg(body, "bundleId")?;
    match verb {
        "launch" => phone
            .launch(bundle)
            .map_err(|e| WdaError::unknown(e.message))
            .map(|()| Value::Null),
        "activate" => phone.activate(bundle).map(|()| Value::Null),
        "terminate" => Ok(json!(phone.terminate(bundle))),
        "state" => Ok(json!(phone.state(bundle))),
        other => Err(WdaError::new(
            404,
            "unknown command",
            format!("Unhandled endpoint: /wda/apps/{other}"),
        )),
    }
}

fn actions(phone: &mut Phone, body: &Value) -> Reply {
    let tree = phone.tree();
    let center = |id: &str| Some(phone.tap_point(&phone.element_in(&tree, id).ok()?));
    let list = gestures(body, &center).map_err(WdaError::invalid_argument)?;
    for g in list {
        match g {
            Gesture::Tap(x, y) => phone.tap(x, y),
            Gesture::LongPress(x, y) => phone.long_press(x, y),
            Gesture::Swipe { from, to, millis } => phone.swipe(from, to, millis),
        }
    }
    Ok(Value::Null)
}

fn press_button(phone: &mut Phone, body: &Value) -> Reply {
    let name = str_arg(body, "name")?;
    match name.to_lowercase().as_str() {
        "home" => phone.home(),
        "volumeup" | "volumedown" => {}
        _ => {
            // WDA's own answer (XCUIDevice+FBHelpers.m): an unknown error, not an invalid argument.
            return Err(WdaError::unknown(format!(
                "The button '{name}' is not supported. The device under test only supports the following buttons: (\n    home,\n    volumedown,\n    volumeup\n)"
            )));
        }
    }
    Ok(Value::Null)
}

fn find(phone: &mut Phone, many: bool, body: &Value) -> Reply {
    let using = str_arg(body, "using")?;
    let value = str_arg(body, "value")?;
    let ids = phone.find(using, value)?;
    let refs: Vec<Value> = ids
        .iter()
        .map(|id| json!({"ELEMENT": id, "element-6066-11e4-a52e-4f735466cecf": id}))
        .collect();
    if many {
        return Ok(Value::Array(refs));
    }
    refs.into_iter().next().ok_or_else(|| {
        WdaError::new(
            404,
            "no such element",
            format!("Unable to find an element using '{using}', value '{value}'"),
        )
    })
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
