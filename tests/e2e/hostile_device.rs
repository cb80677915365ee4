//! A device's screen is hostile input: a dump nested past any stack, more nodes than refs can name,
//! coordinates near `i32::MAX`, a screen too big to read within the call's budget. Each ends in a
//! clear error or a bounded answer, never an abort, a hang or a tap somewhere else.

use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use trailblaze::device::{Bounds, Device, DeviceError, KeyCode, LaunchMode, Screenshot, ViewNode, ViewTree};
use trailblaze::{Session, SessionOptions, Settings};
use trailblaze_e2e::fake_adb::FakeAdb;
use trailblaze_e2e::{Fixture, trailblaze_bin};

/// A device that shows `tree` and records where it was tapped.
struct Screen {
    tree: ViewTree,
    taps: std::sync::Arc<std::sync::Mutex<Vec<(i32, i32)>>>,
    /// Device time per capture.
    slow: Duration,
    /// Captures so far.
    shots: u64,
}

impl Device for Screen {
    fn name(&self) -> String {
        "hostile".into()
    }
    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        std::thread::sleep(self.slow);
        self.shots += 1;
        Ok(self.tree.clone())
    }
    fn captures(&self) -> u64 {
        self.shots
    }
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.taps.lock().expect("lock").push((x, y));
        Ok(())
    }
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.tap(x, y)
    }
    fn input_text(&mut self, _: &str) -> Result<(), DeviceError> {
        Ok(())
    }
    fn press_key(&mut self, _: KeyCode) -> Result<(), DeviceError> {
        Ok(())
    }
    fn launch_app(&mut self, _: &str, _: LaunchMode) -> Result<(), DeviceError> {
        Ok(())
    }
    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        Err(DeviceError::Action("no pictures".into()))
    }
}

fn leaf(text: &str, bounds: Bounds) -> ViewNode {
    ViewNode {
        class_name: "android.widget.TextView".into(),
        text: Some(text.into()),
        bounds,
        enabled: true,
        ..ViewNode::default()
    }
}

fn screen_of(children: Vec<ViewNode>) -> ViewTree {
    ViewTree {
        app_id: Some("com.example.hostile".into()),
        width: 1080,
        height: 2400,
        root: ViewNode {
            class_name: "android.widget.FrameLayout".into(),
            bounds: Bounds {
                left: 0,
                top: 0,
                right: 1080,
                bottom: 2400,
            },
            enabled: true,
            children,
            ..ViewNode::default()
        },
    }
}

type Taps = std::sync::Arc<std::sync::Mutex<Vec<(i32, i32)>>>;

fn session_on(f: &Fixture, tree: ViewTree, slow: Duration, settings: Settings) -> (Session, Taps) {
    let taps = Taps::default();
    let device = Screen {
        tree,
        taps: taps.clone(),
        slow,
        shots: 0,
    };
    let s = f
        .project()
        .open_session(
            "t",
            SessionOptions {
                device: Some(Box::new(device)),
                settings,
                ..SessionOptions::default()
            },
        )
        .expect("session");
    (s, taps)
}

/// Runs `f` on a thread and fails the test (instead of hanging it) when it takes past `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("did not finish within {limit:?} (a loop without end?)"))
}

/// Refs in the snapshot text: `[y778]`.
fn refs(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            Some(l.strip_prefix('[')?.split(']').next()?.to_string())
        })
        .collect()
}

#[test]
fn a_dump_nested_tens_of_thousands_deep_is_a_clear_error_not_an_abort() {
    let f = Fixture::new("t");
    let adb = FakeAdb::demo("emulator-5554");
    let node = r#"<node class="android.view.View" text="/&gt;" bounds="[0,0][10,10]">"#;
    let depth = 50_000;
    adb.phone().dump_override = Some(format!(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">{}{}</hierarchy>",
        node.repeat(depth),
        "</node>".repeat(depth)
    ));
    let server = format!("127.0.0.1:{}", adb.port());
    let snap = |f: &Fixture| {
        std::process::Command::new(trailblaze_bin())
            .args([
                "snapshot",
                "--device",
                "android",
                "--adb-server",
                &server,
                "--trailmaps",
            ])
            .arg(f.root())
            .output()
            .expect("runs")
    };
    let o = snap(&f);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        matches!(o.status.code(), Some(1 | 2)),
        "an error exit, not a signal: {stderr}"
    );
    assert!(stderr.contains("nests deeper than 256 nodes"), "{stderr}");
    // Control: the phone's own screen reads.
    adb.phone().dump_override = None;
    let o = snap(&f);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("hint=\"Email\""));
}

/// A screen of `n` labels.
fn labels(n: usize) -> ViewTree {
    screen_of((0..n).map(|i| leaf(&format!("item {i}"), Bounds::default())).collect())
}

#[test]
fn more_nodes_than_short_refs_still_get_unique_refs_in_time_linear_in_the_nodes() {
    // 30,000 labels: more than the 26,000 refs of a letter and three digits; 3,000: far fewer.
    let n = 30_000;
    // The hang guard only (a search for a free ref without end); the bound is the ratio below.
    let (text, few, many) = within(Duration::from_secs(600), move || {
        let f = Fixture::new("t");
        // The sessions are opened first: what is timed is each snapshot alone.
        let (small, _) = session_on(&f, labels(n / 10), Duration::ZERO, Settings::default());
        let (large, _) = session_on(&f, labels(n), Duration::ZERO, Settings::default());
        let timed = |s: &Session| {
            // A call that may change the screen first: the snapshot is then made anew, not the
            // last one reused.
            s.call("wait", json!({ "timeToWaitInSeconds": 0 })).expect("wait");
            let before = s.captures();
            let started = std::time::Instant::now();
            let v = s.call("snapshot", json!({})).expect("snapshot");
            let took = started.elapsed();
            assert_eq!(s.captures(), before + 1, "each timed snapshot is a capture");
            (took, v["text"].as_str().unwrap_or_default().to_string())
        };
        // Interleaved, best of three each: a busy machine slows both alike.
        let (mut few, mut many, mut text) = (Duration::MAX, Duration::MAX, String::new());
        for _ in 0..3 {
            few = few.min(timed(&small).0);
            let (t, v) = timed(&large);
            many = many.min(t);
            text = v;
        }
        (text, few, many)
    });
    let all = refs(&text);
    assert_eq!(all.len(), n, "every label has a line");
    let unique: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), n, "refs are unique");
    assert!(
        all.iter().any(|r| r.len() > 4),
        "longer refs once the short ones run out"
    );
    // Ten times the nodes, a tenth of them past the short refs (a few dozen tries each): about ten
    // times the time. A search for a free ref that grows with the refs taken is a hundred times.
    eprintln!("snapshot of {} labels: {few:?}; of {n}: {many:?}", n / 10);
    assert!(
        many < few * 30,
        "{n} labels took {many:?}, {} took {few:?}: not linear in the nodes",
        n / 10
    );
    // Control: a screen of a few nodes keeps the short refs.
    let f = Fixture::new("t");
    let (s, _) = session_on(
        &f,
        screen_of(vec![leaf("a", Bounds::default()), leaf("b", Bounds::default())]),
        Duration::ZERO,
        Settings::default(),
    );
    let v = s.call("snapshot", json!({})).expect("snapshot");
    let short = refs(v["text"].as_str().unwrap_or_default());
    assert_eq!(short.len(), 2, "{v}");
    assert!(short.iter().all(|r| r.len() == 4), "{short:?}");
}

#[test]
fn a_device_tree_past_the_node_cap_or_coordinate_range_is_refused() {
    let f = Fixture::new("t");
    let too_many: Vec<ViewNode> = (0..50_001).map(|_| leaf("x", Bounds::default())).collect();
    let (s, _) = session_on(&f, screen_of(too_many), Duration::ZERO, Settings::default());
    let e = within(Duration::from_secs(60), move || {
        s.call("snapshot", json!({})).expect_err("over the cap").to_string()
    });
    assert!(e.contains("more than 50000 nodes"), "{e}");
    // A node that covers the top of the screen and reaches two million pixels past each side: its
    // visible part would take a tap, if the device's nonsense were believed.
    let far = Bounds {
        left: -2_000_000,
        top: 0,
        right: 2_000_000,
        bottom: 100,
    };
    let button = |bounds| {
        screen_of(vec![ViewNode {
            clickable: true,
            ..leaf("far", bounds)
        }])
    };
    let tap_far = json!({ "nodeSelector": { "androidAccessibility": { "textRegex": "^far$" } } });
    let (s, taps) = session_on(&f, button(far), Duration::ZERO, Settings::default());
    let tapped = s.call("tapOnElementBySelector", tap_far.clone());
    assert!(
        taps.lock().expect("lock").is_empty(),
        "a tap was attempted and did not land"
    );
    let e = tapped.expect_err("no tap on a node out of range").to_string();
    assert!(e.contains("beyond ±1000000 pixels"), "{e}");
    let e = s.call("snapshot", json!({})).expect_err("out of range").to_string();
    assert!(e.contains("beyond ±1000000 pixels"), "{e}");
    // Control: the same tap on the node within range lands.
    let near = Bounds {
        left: 0,
        top: 0,
        right: 1080,
        bottom: 100,
    };
    let (s, taps) = session_on(&f, button(near), Duration::ZERO, Settings::default());
    s.call("tapOnElementBySelector", tap_far).expect("a tap within range");
    assert_eq!(taps.lock().expect("lock").as_slice(), [(540, 50)]);
}

#[test]
fn a_tap_never_lands_outside_the_node_or_the_screen() {
    let f = Fixture::new("t");
    // Half off the left edge, wholly below the screen, and inverted: none has a safe centre.
    let half = Bounds {
        left: -400,
        top: 100,
        right: 200,
        bottom: 300,
    };
    let below = Bounds {
        left: 0,
        top: 3000,
        right: 100,
        bottom: 3100,
    };
    let inverted = Bounds {
        left: 500,
        top: 500,
        right: 100,
        bottom: 100,
    };
    let tree = screen_of(vec![
        ViewNode {
            clickable: true,
            ..leaf("", half)
        },
        ViewNode {
            clickable: true,
            ..leaf("", below)
        },
        ViewNode {
            clickable: true,
            ..leaf("", inverted)
        },
    ]);
    let (s, taps) = session_on(&f, tree, Duration::ZERO, Settings::default());
    let v = s.call("snapshot", json!({})).expect("snapshot");
    let r = refs(v["text"].as_str().unwrap_or_default());
    assert_eq!(r.len(), 3, "{v}");
    // The half-visible node is tapped in its visible part: x in 0..200, not at -100.
    s.call("tap", json!({ "ref": r[0] })).expect("visible part");
    let (x, y) = taps.lock().expect("lock")[0];
    assert!((0..200).contains(&x) && (100..300).contains(&y), "({x}, {y})");
    for (i, what) in [(1, "below the screen"), (2, "inverted")] {
        let e = s.call("tap", json!({ "ref": r[i] })).expect_err(what).to_string();
        assert!(e.contains("no part on the screen"), "{what}: {e}");
    }
    for (x, y) in [(-5, 10), (10, 2400), (i32::MAX, 0)] {
        let e = s
            .call("tapOnPoint", json!({ "x": x, "y": y }))
            .expect_err("off screen")
            .to_string();
        assert!(e.contains("outside the screen"), "{e}");
    }
    assert_eq!(
        taps.lock().expect("lock").len(),
        1,
        "only the safe tap reached the device"
    );
    // Control: a point on the screen is tapped as given.
    s.call("tapOnPoint", json!({ "x": 1079, "y": 2399 }))
        .expect("on screen");
    assert_eq!(taps.lock().expect("lock")[1], (1079, 2399));
}

#[test]
fn the_wall_clock_budget_bounds_reading_a_huge_screen() {
    let f = Fixture::new("t");
    let wide: Vec<ViewNode> = (0..5_000)
        .map(|i| leaf(&format!("row {i}"), Bounds::default()))
        .collect();
    let settings = |wall_ms: u64| Settings {
        limits: trailblaze::Limits {
            wall_timeout: Duration::from_millis(wall_ms),
            ..trailblaze::Limits::default()
        },
        ..Settings::default()
    };
    // The capture itself takes 300 ms of device time: the 200 ms budget is gone before the refs.
    let (s, _) = session_on(&f, screen_of(wide.clone()), Duration::from_millis(300), settings(200));
    let e = s.call("snapshot", json!({})).expect_err("past the budget").to_string();
    assert!(e.contains("stopped while reading the screen"), "{e}");
    // Control: with time to spare the same screen reads whole.
    let (s, _) = session_on(&f, screen_of(wide), Duration::from_millis(300), settings(120_000));
    let v: Value = s.call("snapshot", json!({})).expect("reads");
    assert_eq!(refs(v["text"].as_str().unwrap_or_default()).len(), 5_000);
}
