//! The booted iOS simulators `trailblaze devices` lists on macOS: `xcrun simctl list -j devices
//! booted`, read here so the listing can say which of them has no WebDriverAgent.

use serde_json::Value;

/// A booted simulator: its UDID, name and runtime (`iOS 17.5`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Simulator {
    pub udid: String,
    pub name: String,
    pub runtime: String,
}

/// The booted simulators `simctl`'s JSON lists (`{"devices": {"com.apple.CoreSimulator.SimRuntime.iOS-17-5":
/// [{"udid", "name", "state"}, ...]}}`); anything else in it is ignored.
pub fn booted(json: &str) -> Vec<Simulator> {
    let Ok(v) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    let Some(runtimes) = v.get("devices").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (runtime, devices) in runtimes {
        // `com.apple.CoreSimulator.SimRuntime.iOS-17-5` reads `iOS 17.5`.
        let short = runtime.rsplit('.').next().unwrap_or(runtime);
        let runtime = match short.split_once('-') {
            Some((os, version)) => format!("{os} {}", version.replace('-', ".")),
            None => short.to_string(),
        };
        for d in devices.as_array().into_iter().flatten() {
            let text = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            if text("state") == "Booted" && !text("udid").is_empty() {
                out.push(Simulator {
                    udid: text("udid"),
                    name: text("name"),
                    runtime: runtime.clone(),
                });
            }
        }
    }
    out
}

/// The booted simulators, when this machine has `xcrun` (macOS with Xcode); none elsewhere.
pub fn list() -> Vec<Simulator> {
    let Ok(out) = std::process::Command::new("xcrun")
        .args(["simctl", "list", "-j", "devices", "booted"])
        .stderr(std::process::Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    booted(&String::from_utf8_lossy(&out.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booted_simulators_are_read_and_the_rest_left_out() {
        let json = r#"{"devices": {
            "com.apple.CoreSimulator.SimRuntime.iOS-17-5": [
                {"udid": "A1B2", "name": "iPhone 15", "state": "Booted"},
                {"udid": "C3D4", "name": "iPhone 15 Pro", "state": "Shutdown"}
            ],
            "com.apple.CoreSimulator.SimRuntime.watchOS-10-5": [
                {"udid": "E5F6", "name": "Apple Watch", "state": "Booted"}
            ]}}"#;
        let got = booted(json);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            got[0],
            Simulator {
                udid: "A1B2".into(),
                name: "iPhone 15".into(),
                runtime: "iOS 17.5".into()
            }
        );
        assert!(
            got.iter().all(|s| s.udid != "C3D4"),
            "a shut-down simulator is not listed"
        );
        for bad in [
            "",
            "null",
            "[]",
            r#"{"devices": 3}"#,
            r#"{"devices": {"x": [{"state": "Booted"}]}}"#,
        ] {
            assert!(booted(bad).is_empty(), "{bad}");
        }
    }
}
