//! The request bodies the device sends, and the rules it checks before sending: W3C pointer
//! actions for touches, session capabilities, bundle ids, the device classifier.

use serde_json::{Value, json};

/// How long a tap holds, in milliseconds.
pub(crate) const TAP_MS: u32 = 100;
/// How long a long press holds (iOS's long-press recognizer fires after 500 ms).
pub(crate) const LONG_PRESS_MS: u32 = 1000;

/// `POST /session/{id}/actions` for one finger that touches (x, y) and lifts after `hold_ms`.
pub fn press(x: i32, y: i32, hold_ms: u32) -> Value {
    finger(vec![
        json!({"type": "pointerMove", "duration": 0, "x": x, "y": y}),
        json!({"type": "pointerDown", "button": 0}),
        json!({"type": "pause", "duration": hold_ms}),
        json!({"type": "pointerUp", "button": 0}),
    ])
}

/// `POST /session/{id}/actions` for one finger dragged from `from` to `to` over `millis`.
pub fn drag(from: (i32, i32), to: (i32, i32), millis: u32) -> Value {
    finger(vec![
        json!({"type": "pointerMove", "duration": 0, "x": from.0, "y": from.1}),
        json!({"type": "pointerDown", "button": 0}),
        json!({"type": "pointerMove", "duration": millis, "x": to.0, "y": to.1}),
        json!({"type": "pointerUp", "button": 0}),
    ])
}

fn finger(actions: Vec<Value>) -> Value {
    json!({"actions": [{
        "type": "pointer",
        "id": "finger1",
        "parameters": {"pointerType": "touch"},
        "actions": actions,
    }]})
}

/// `POST /session`'s body: W3C capabilities, with the app to launch when there is one.
///
/// `shouldTerminateApp: false`: WDA ends the app a session launched when the session ends, and a
/// one-shot command (`trailblaze snapshot`, `tool`) would then leave the device at its home screen;
/// the app stays as the command left it, as on Android.
pub fn capabilities(bundle_id: Option<&str>, force_launch: bool) -> Value {
    let always = match bundle_id {
        None => json!({ "shouldTerminateApp": false }),
        Some(id) => json!({
            "bundleId": id,
            "shouldWaitForQuiescence": true,
            "forceAppLaunch": force_launch,
            "shouldTerminateApp": false,
        }),
    };
    json!({"capabilities": {"alwaysMatch": always, "firstMatch": [{}]}})
}

/// Whether `id` reads as a bundle id (`com.example.app`): dot-separated parts of ASCII letters,
/// digits and `-`, as Apple allows them. Anything else is refused before it reaches the device.
pub fn is_bundle_id(id: &str) -> bool {
    id.len() <= 255
        && id
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'))
}

/// The classifier recordings are keyed by: `ios-ipad` when the screen's short side is at least
/// 1536 pixels (an iPad's), else `ios-iphone` — the original's rule. `width` and `height` are
/// points, `scale` pixels per point.
pub fn classify(width: f64, height: f64, scale: f64) -> &'static str {
    if width.min(height) * scale >= 1536.0 {
        "ios-ipad"
    } else {
        "ios-iphone"
    }
}

/// The buttons `press_button` names, as WDA's `/wda/pressButton` takes them.
pub const BUTTONS: [&str; 3] = ["home", "volumeUp", "volumeDown"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touches_are_one_w3c_finger() {
        let tap = press(120, 340, TAP_MS);
        let expected = json!({"actions": [{
            "type": "pointer", "id": "finger1", "parameters": {"pointerType": "touch"},
            "actions": [
                {"type": "pointerMove", "duration": 0, "x": 120, "y": 340},
                {"type": "pointerDown", "button": 0},
                {"type": "pause", "duration": 100},
                {"type": "pointerUp", "button": 0},
            ],
        }]});
        assert_eq!(tap, expected);
        let long = press(1, 2, LONG_PRESS_MS);
        assert_eq!(
            long["actions"][0]["actions"][2],
            json!({"type": "pause", "duration": 1000})
        );
        let swipe = drag((200, 700), (200, 100), 400);
        assert_eq!(
            swipe["actions"][0]["actions"],
            json!([
                {"type": "pointerMove", "duration": 0, "x": 200, "y": 700},
                {"type": "pointerDown", "button": 0},
                {"type": "pointerMove", "duration": 400, "x": 200, "y": 100},
                {"type": "pointerUp", "button": 0},
            ])
        );
    }

    #[test]
    fn sessions_name_an_app_only_when_one_is_launched() {
        assert_eq!(
            capabilities(None, true),
            json!({"capabilities": {"alwaysMatch": {"shouldTerminateApp": false}, "firstMatch": [{}]}})
        );
        let caps = capabilities(Some("com.apple.Preferences"), false);
        assert_eq!(
            caps["capabilities"]["alwaysMatch"],
            json!({"bundleId": "com.apple.Preferences", "shouldWaitForQuiescence": true, "forceAppLaunch": false, "shouldTerminateApp": false})
        );
    }

    #[test]
    fn bundle_ids_are_reverse_dns() {
        for good in ["com.apple.Preferences", "com.example.my-app2", "Safari", "a.b-c.D9"] {
            assert!(is_bundle_id(good), "{good}");
        }
        let long = "a".repeat(256);
        for bad in [
            "",
            ".com.x",
            "com..x",
            "com.x.",
            "com.x y",
            "com.x;rm",
            "com.ex_ample",
            "ç.a",
            &long,
        ] {
            assert!(!is_bundle_id(bad), "{bad}");
        }
    }

    #[test]
    fn ipads_are_told_by_their_short_side_in_pixels() {
        assert_eq!(classify(393.0, 852.0, 3.0), "ios-iphone");
        assert_eq!(classify(820.0, 1180.0, 2.0), "ios-ipad");
        // Landscape is the same device.
        assert_eq!(classify(1180.0, 820.0, 2.0), "ios-ipad");
        assert_eq!(classify(852.0, 393.0, 3.0), "ios-iphone");
        // The boundary: 768 points at 2x is 1536 pixels (the first iPads with Retina screens).
        assert_eq!(classify(768.0, 1024.0, 2.0), "ios-ipad");
        assert_eq!(classify(767.0, 1024.0, 2.0), "ios-iphone");
        // Points alone do not decide: an iPad at 1x is under the line.
        assert_eq!(classify(768.0, 1024.0, 1.0), "ios-iphone");
    }
}
