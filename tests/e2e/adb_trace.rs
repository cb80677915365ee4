//! An Android trace over the real adb protocol, against the fake phone (tests/fake_adb/trace.rs):
//! the log window from `logcat -d -v epoch -T`, in host time; `screenrecord` stopped with SIGINT,
//! pulled and deleted; and what could not be kept as notes. The fake's new commands are checked
//! with Debian's real `adb` client.

use std::time::{Duration, Instant};

use trailblaze::android::{AdbDevice, AdbOptions};
use trailblaze::device::Device;
use trailblaze::device::trace::{DeviceTrace, MAX_LINES, TraceOptions, Video, unix_ms_now};
use trailblaze_e2e::fake_adb::{FakeAdb, MP4_HEAD, MP4_MOOV};

use crate::adb::{adb_output, real_adb};

const SERIAL: &str = "emulator-5554";
const VIDEO: TraceOptions = TraceOptions { video: true };
const NO_VIDEO: TraceOptions = TraceOptions { video: false };
/// The fake phone's clock runs 3 hours ahead of the host's.
const SKEW_MS: i64 = 3 * 3600 * 1000;

fn connect(fake: &FakeAdb) -> AdbDevice {
    AdbDevice::connect(fake.addr(), None, AdbOptions::default()).expect("connects to the fake")
}

fn texts(t: &DeviceTrace) -> Vec<&str> {
    t.device_log.iter().map(|l| l.text.as_str()).collect()
}

fn commands(fake: &FakeAdb) -> Vec<String> {
    fake.phone().commands.clone()
}

/// The mp4 a trace handed over.
fn mp4(t: &DeviceTrace) -> &[u8] {
    match &t.video {
        Some(Video::File { mime, bytes, .. }) => {
            assert_eq!(mime, "video/mp4");
            bytes
        }
        other => panic!("no mp4: {other:?}, notes {:?}", t.notes),
    }
}

#[test]
fn a_trace_window_holds_the_phones_log_lines_inside_it_in_host_time() {
    let fake = FakeAdb::demo(SERIAL);
    {
        let mut p = fake.phone();
        p.trace.clock_skew_ms = SKEW_MS;
        let now = p.now_ms();
        p.log_at(now - 60_000, 'E', "Before", "a crash a minute ago");
        p.log('W', "Before", "just before the trail");
    }
    std::thread::sleep(Duration::from_millis(20));
    let mut d = connect(&fake);
    let host_before = unix_ms_now();
    d.trace_begin(&NO_VIDEO);
    std::thread::sleep(Duration::from_millis(20));
    {
        let mut p = fake.phone();
        p.log('I', "ActivityManager", "Start proc 4321:com.example.demo/u0a123");
        p.log(
            'E',
            "AndroidRuntime",
            "FATAL EXCEPTION: main\njava.lang.RuntimeException: boom",
        );
        p.log('D', "tag with space", "key: value");
        let now = p.now_ms();
        p.log_raw(now, "logcat: a line of logcat's own");
    }
    d.tap(10, 10).expect("the phone works during the window");
    let t = d.trace_end();
    let host_after = unix_ms_now();

    assert_eq!(
        texts(&t),
        [
            "Start proc 4321:com.example.demo/u0a123",
            "FATAL EXCEPTION: main",
            "java.lang.RuntimeException: boom",
            "key: value",
            "logcat: a line of logcat's own",
        ]
    );
    let parsed: Vec<(&str, &str)> = t
        .device_log
        .iter()
        .map(|l| (l.level.as_str(), l.source.as_str()))
        .collect();
    assert_eq!(
        parsed,
        [
            ("I", "ActivityManager"),
            ("E", "AndroidRuntime"),
            ("E", "AndroidRuntime"),
            ("D", "tag with space"),
            ("I", ""),
        ]
    );
    // Host times, though the phone's clock is 3 hours ahead (the slack: half of `date`'s round trip).
    for l in &t.device_log {
        assert!(
            l.unix_ms >= host_before - 500.0 && l.unix_ms <= host_after + 500.0,
            "{} not in [{host_before}, {host_after}]",
            l.unix_ms
        );
    }
    assert!(t.notes.is_empty(), "{:?}", t.notes);
    assert!(t.video.is_none());

    // The window was asked of the phone in its own clock: -T within the trail, 3 hours ahead.
    let cmds = commands(&fake);
    assert!(cmds.iter().any(|c| c == "date +%s.%N"), "{cmds:?}");
    let logcat = cmds.iter().find(|c| c.starts_with("logcat ")).expect("logcat sent");
    let since: f64 = logcat
        .strip_prefix("logcat -d -v epoch -T '")
        .and_then(|s| s.strip_suffix('\''))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{logcat}"));
    let since_host_ms = since * 1000.0 - SKEW_MS as f64;
    assert!(
        since_host_ms >= host_before - 500.0 && since_host_ms <= host_after + 500.0,
        "{logcat}"
    );
    assert!(!cmds.iter().any(|c| c.contains("screenrecord")), "{cmds:?}");

    // Control: the lines before the window are in the phone's log, so their absence is -T's doing.
    let all = fake.phone().run("logcat -d -v epoch");
    let all = String::from_utf8_lossy(&all.stdout).into_owned();
    assert!(
        all.contains("a crash a minute ago") && all.contains("just before the trail"),
        "{all}"
    );
}

#[test]
fn a_huge_or_hostile_log_is_capped_and_never_fails_the_trail() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = connect(&fake);

    // More lines than a trace keeps: the last MAX_LINES.
    d.trace_begin(&NO_VIDEO);
    {
        let mut p = fake.phone();
        for i in 0..MAX_LINES + 5000 {
            p.log('I', "Chatty", &format!("line {i}"));
        }
    }
    let t = d.trace_end();
    assert_eq!(t.device_log.len(), MAX_LINES);
    assert_eq!(texts(&t).first(), Some(&"line 5000"));
    assert_eq!(texts(&t).last(), Some(&format!("line {}", MAX_LINES + 4999).as_str()));
    assert!(
        t.notes.iter().any(|n| n.contains("the last 20000 are kept")),
        "{:?}",
        t.notes
    );

    // More bytes than are read: the end is kept, the cut line dropped, long lines capped.
    d.trace_begin(&NO_VIDEO);
    {
        let mut p = fake.phone();
        p.log('E', "Flood", &"x".repeat(12 << 20));
        p.log('W', "Long", &"y".repeat(100_000));
        let now = p.now_ms();
        p.log_raw(now, "\u{1b}[31mno header\u{0}");
        p.log('I', "After", "the end");
    }
    let started = Instant::now();
    let t = d.trace_end();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(texts(&t).len(), 3, "{:?}", t.notes);
    assert!(t.device_log[0].text.len() < 9000 && t.device_log[0].text.starts_with("yyy"));
    assert_eq!(t.device_log[1].text, "\u{1b}[31mno header\u{0}");
    assert_eq!(t.device_log[2].text, "the end");
    assert!(t.notes.iter().any(|n| n.contains("more than 8 MiB")), "{:?}", t.notes);
    d.tap(10, 10).expect("the phone still answers");

    // Control: a small log is whole and has no notes.
    d.trace_begin(&NO_VIDEO);
    fake.phone().log('I', "Quiet", "one line");
    let t = d.trace_end();
    assert_eq!(texts(&t), ["one line"]);
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}

#[test]
fn video_on_gives_a_finished_mp4_and_the_phones_file_is_removed() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = connect(&fake);
    let host_before = unix_ms_now();
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(200));
    // Recording, on its own connection, while the trail drives the phone.
    let path = {
        let p = fake.phone();
        assert_eq!(p.trace.recordings.len(), 1, "one screenrecord runs");
        let path = p.trace.recordings[0].path.clone();
        assert!(path.starts_with("/data/local/tmp/trailblaze-trace-") && path.ends_with(".mp4"));
        assert_eq!(p.files.get(&path).map(Vec::as_slice), Some(MP4_HEAD));
        path
    };
    d.tap(10, 10).expect("taps while recording");
    d.snapshot().expect("reads the screen while recording");
    let t = d.trace_end();

    let bytes = mp4(&t);
    assert_eq!(&bytes[4..8], b"ftyp");
    assert!(bytes.ends_with(MP4_MOOV), "finished by SIGINT: it has its index");
    match &t.video {
        Some(Video::File { started_unix_ms, .. }) => {
            assert!(*started_unix_ms >= host_before && *started_unix_ms <= unix_ms_now())
        }
        other => panic!("{other:?}"),
    }
    assert!(t.notes.is_empty(), "{:?}", t.notes);
    let p = fake.phone();
    assert!(!p.files.contains_key(&path), "the phone's temp file is deleted");
    assert!(p.trace.recordings.is_empty());
    let pid = p.trace.signals.first().map(|(pid, _)| *pid).expect("a signal");
    assert_eq!(p.trace.signals, [(pid, "INT".to_owned())]);
    let cmds = &p.commands;
    for wanted in [
        format!("echo $$; exec screenrecord --bit-rate 4000000 --time-limit 180 '{path}'"),
        format!("kill -INT {pid}"),
        format!("sync RECV {path}"),
        format!("rm -f '{path}'"),
    ] {
        assert!(cmds.contains(&wanted), "{wanted} not in {cmds:?}");
    }
}

#[test]
fn video_off_starts_no_screenrecord() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = connect(&fake);
    d.trace_begin(&NO_VIDEO);
    d.tap(10, 10).expect("tap");
    let t = d.trace_end();
    assert!(t.video.is_none() && t.notes.is_empty(), "{:?}", t.notes);
    assert!(fake.phone().trace.recorded.is_empty());
    assert!(!commands(&fake).iter().any(|c| c.contains("screenrecord")));

    // Control: the same device with video on records.
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(100));
    let t = d.trace_end();
    mp4(&t);
    assert_eq!(fake.phone().trace.recorded.len(), 1);
}

#[test]
fn a_phone_without_screenrecord_gives_a_note_not_an_error() {
    let fake = FakeAdb::demo(SERIAL);
    fake.phone().trace.no_screenrecord = true;
    let mut d = connect(&fake);
    for wait in [Duration::ZERO, Duration::from_millis(200)] {
        d.trace_begin(&VIDEO);
        std::thread::sleep(wait);
        fake.phone().log('I', "App", "still logged");
        let t = d.trace_end();
        assert!(t.video.is_none());
        assert_eq!(
            t.notes,
            ["screenrecord is not on this device: no video"],
            "after {wait:?}"
        );
        assert_eq!(texts(&t), ["still logged"]);
        d.tap(10, 10).expect("the session goes on");
    }
    // Control: with screenrecord back, the same device gives a video and no note.
    fake.phone().trace.no_screenrecord = false;
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(100));
    let t = d.trace_end();
    mp4(&t);
    assert!(t.notes.is_empty(), "{:?}", t.notes);
}

#[test]
fn begin_and_end_twice_keeps_each_window_apart() {
    let fake = FakeAdb::demo(SERIAL);
    let mut d = connect(&fake);
    assert!(d.trace_end().is_empty(), "an end without a begin keeps nothing");
    let mut paths = Vec::new();
    for n in 1..=2 {
        d.trace_begin(&VIDEO);
        std::thread::sleep(Duration::from_millis(100));
        paths.push(fake.phone().trace.recordings[0].path.clone());
        fake.phone().log('I', "Trail", &format!("trail {n}"));
        std::thread::sleep(Duration::from_millis(5));
        let t = d.trace_end();
        assert_eq!(texts(&t), [format!("trail {n}").as_str()]);
        assert!(mp4(&t).ends_with(MP4_MOOV));
        assert!(t.notes.is_empty(), "{:?}", t.notes);
    }
    assert_ne!(paths[0], paths[1], "each recording has its own file");
    let p = fake.phone();
    assert!(p.files.keys().all(|f| !f.ends_with(".mp4")), "{:?}", p.files.keys());
    drop(p);

    // A begin while a window is open closes the old one (its recording stopped and deleted).
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(100));
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(fake.phone().trace.recordings.len(), 1);
    mp4(&d.trace_end());
    assert!(fake.phone().files.keys().all(|f| !f.ends_with(".mp4")));
}

#[test]
fn a_recording_past_its_time_limit_says_so_and_keeps_the_video() {
    let fake = FakeAdb::demo(SERIAL);
    let opts = AdbOptions {
        video_limit_s: 1,
        ..AdbOptions::default()
    };
    let mut d = AdbDevice::connect(fake.addr(), None, opts).expect("connects");
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(1500));
    let t = d.trace_end();
    assert!(mp4(&t).ends_with(MP4_MOOV));
    assert!(
        t.notes
            .iter()
            .any(|n| n.contains("longer than screenrecord's 1 s limit")),
        "{:?}",
        t.notes
    );
    assert!(fake.phone().trace.signals.is_empty(), "it had ended: nothing to stop");
}

#[test]
fn a_refused_logcat_or_a_stuck_phone_is_a_note_within_the_deadline() {
    let fake = FakeAdb::demo(SERIAL);
    fake.phone().trace.logcat_denied = true;
    let mut d = connect(&fake);
    d.trace_begin(&NO_VIDEO);
    let t = d.trace_end();
    assert_eq!(
        t.notes,
        ["logcat refused (logcat: Unable to open log device '/dev/log/main': Permission denied): no device log"]
    );
    d.tap(10, 10).expect("the trail goes on");
    fake.phone().trace.logcat_denied = false;

    // A call whose wall-clock budget ran out sends nothing (the phone is not counted as stuck).
    d.trace_begin(&NO_VIDEO);
    d.set_deadline(Some(Instant::now()));
    let sent = commands(&fake).len();
    let t = d.trace_end();
    assert_eq!(
        t.notes,
        ["the call's wall-clock budget had run out when the trace ended: no device log"]
    );
    assert_eq!(commands(&fake).len(), sent);
    d.set_deadline(None);
    d.tap(10, 10).expect("the phone still counts as answering");
    // Control: with budget left, the same trace reads the log.
    d.trace_begin(&NO_VIDEO);
    d.set_deadline(Some(Instant::now() + Duration::from_secs(30)));
    fake.phone().log('I', "App", "read");
    assert_eq!(texts(&d.trace_end()), ["read"]);
    d.set_deadline(None);

    // A phone that stops answering: the trace ends at the call timeout, with notes.
    let opts = AdbOptions {
        call_timeout: Duration::from_millis(300),
        ..AdbOptions::default()
    };
    let mut d = AdbDevice::connect(fake.addr(), None, opts).expect("connects");
    d.trace_begin(&VIDEO);
    std::thread::sleep(Duration::from_millis(100));
    fake.set_delay(Duration::from_secs(5));
    let started = Instant::now();
    let t = d.trace_end();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(t.video.is_none());
    assert!(
        t.notes.iter().any(|n| n.contains("device log could not be read")),
        "{:?}",
        t.notes
    );
    assert!(
        t.notes.iter().any(|n| n.contains("screenrecord could not be stopped")),
        "{:?}",
        t.notes
    );
}

#[test]
fn the_real_adb_client_reads_the_fakes_clock_log_window_and_files() {
    let Some(adb) = real_adb() else { return };
    let fake = FakeAdb::demo(SERIAL);
    let since = {
        let mut p = fake.phone();
        p.trace.clock_skew_ms = SKEW_MS;
        let now = p.now_ms();
        p.log_at(now - 10_000, 'E', "Old", "before the window");
        p.log_at(now, 'I', "New", "inside the window");
        p.log_at(now + 1, 'W', "New", "also inside");
        now
    };
    let since_arg = format!("{}.{:03}", since / 1000, since % 1000);
    let out = adb_output(
        adb,
        fake.port(),
        &["-s", SERIAL, "logcat", "-d", "-v", "epoch", "-T", &since_arg],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let window = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        window.contains(&format!("{since_arg}  1234  1256 I New     : inside the window\n"))
            && window.contains("W New     : also inside"),
        "{window}"
    );
    assert!(!window.contains("before the window"), "{window}");
    // Control: without -T the older line is printed too.
    let out = adb_output(adb, fake.port(), &["-s", SERIAL, "logcat", "-d", "-v", "epoch"]);
    let all = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        all.contains("before the window") && all.contains("inside the window"),
        "{all}"
    );

    // The clock, 3 hours ahead of the host's.
    let out = adb_output(adb, fake.port(), &["-s", SERIAL, "shell", "date", "+%s.%N"]);
    let phone_s: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().expect("seconds");
    let ahead_s = phone_s - unix_ms_now() / 1000.0;
    assert!((ahead_s - (SKEW_MS / 1000) as f64).abs() < 5.0, "{ahead_s}");

    // A recording's file comes back whole through `adb pull` (sync STAT and RECV).
    let file = [MP4_HEAD, &[0x5a; 200_000], MP4_MOOV].concat();
    fake.phone()
        .files
        .insert("/data/local/tmp/rec.mp4".into(), file.clone());
    let dir = tempfile::tempdir().expect("tempdir");
    let local = dir.path().join("rec.mp4");
    let local_arg = local.to_string_lossy().into_owned();
    let out = adb_output(
        adb,
        fake.port(),
        &["-s", SERIAL, "pull", "/data/local/tmp/rec.mp4", &local_arg],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(&local).expect("pulled"), file);
    // Control: a file the phone does not have fails to pull.
    let out = adb_output(
        adb,
        fake.port(),
        &["-s", SERIAL, "pull", "/data/local/tmp/none.mp4", &local_arg],
    );
    assert!(!out.status.success());
}
