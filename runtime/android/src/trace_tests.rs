//! The trace's parsers: `date`, logcat's `-v epoch` lines, the mp4 check, the log's tail sink.

use std::io::Write;

use super::*;

#[test]
fn epoch_times_parse_with_or_without_nanoseconds() {
    assert_eq!(parse_epoch("1700000000.123456789"), Some(1_700_000_000_123.456_8));
    assert_eq!(parse_epoch("1700000000"), Some(1_700_000_000_000.0));
    // A `date` without %N prints it as is: whole seconds.
    assert_eq!(parse_epoch("1700000000.N"), Some(1_700_000_000_000.0));
    assert_eq!(parse_epoch("1700000000.%N"), Some(1_700_000_000_000.0));
    for bad in ["", "date: bad format", "-1.5", "12a.3", ".5", "1234567890123.0"] {
        assert_eq!(parse_epoch(bad), None, "{bad:?}");
    }
}

const LOG: &str = "--------- beginning of main
1700000000.100  1234  1256 I ActivityManager: Start proc 4321:com.example.demo/u0a123
1700000000.250   612   640 E AndroidRuntime: FATAL EXCEPTION: main
1700000000.250   612   640 E AndroidRuntime: java.lang.RuntimeException: boom: at line 3
--------- beginning of system
1700000001.000     1     1 W tag with space: spaces in the tag
1700000001.5     1     1 F libc    :
logcat: a warning of logcat's own
1700000002.000     7     8 D Short   : ok\r
";

#[test]
fn logcat_lines_parse_into_host_time_level_tag_and_text() {
    // The phone's clock is 1 s ahead of the host's.
    let lines = parse_logcat(LOG, 1_700_000_000_000.0, 1000.0);
    let got: Vec<(f64, &str, &str, &str)> = lines
        .iter()
        .map(|l| (l.unix_ms, l.level.as_str(), l.source.as_str(), l.text.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                1_699_999_999_100.0,
                "I",
                "ActivityManager",
                "Start proc 4321:com.example.demo/u0a123"
            ),
            (1_699_999_999_250.0, "E", "AndroidRuntime", "FATAL EXCEPTION: main"),
            (
                1_699_999_999_250.0,
                "E",
                "AndroidRuntime",
                "java.lang.RuntimeException: boom: at line 3"
            ),
            (1_700_000_000_000.0, "W", "tag with space", "spaces in the tag"),
            (1_700_000_000_500.0, "F", "libc", ""),
            // Kept as text, at the time of the line before it.
            (1_700_000_000_500.0, "I", "", "logcat: a warning of logcat's own"),
            (1_700_000_001_000.0, "D", "Short", "ok"),
        ]
    );
}

#[test]
fn lines_before_the_window_are_left_out() {
    let lines = parse_logcat(LOG, 1_700_000_001_000.0, 0.0);
    assert_eq!(lines.first().map(|l| l.source.as_str()), Some("tag with space"));
    assert_eq!(lines.len(), 4);
    // Control: from an earlier start every line is there.
    assert_eq!(parse_logcat(LOG, 0.0, 0.0).len(), 7);
}

#[test]
fn hostile_lines_are_text_and_long_ones_are_capped() {
    let long = "x".repeat(100_000);
    let text = format!(
        "1700000000.100  1 1 X Tag: not a level\n1700000000.1x  1 1 I Tag: bad time\n\u{1b}[31mred\u{0}\n1700000000.200  1 1 I Tag: {long}\n1700000000.300 1 1 I {long}: tag too long\n"
    );
    let lines = parse_logcat(&text, 0.0, 0.0);
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0].text, "1700000000.100  1 1 X Tag: not a level");
    assert_eq!(lines[2].text, "\u{1b}[31mred\u{0}");
    assert!(lines[..3].iter().all(|l| l.level == "I" && l.source.is_empty()));
    assert!(lines[3].text.len() <= MAX_TEXT + 3 && lines[3].text.ends_with('…'));
    assert!(lines[4].source.len() <= MAX_TEXT + 3);
    // Control: a line at the cap is whole.
    let exact = format!("1700000000.200  1 1 I Tag: {}\n", "y".repeat(MAX_TEXT));
    assert_eq!(parse_logcat(&exact, 0.0, 0.0)[0].text.len(), MAX_TEXT);
    // A cut inside a character stays valid UTF-8.
    let wide = format!("1700000000.200  1 1 I Tag: {}\n", "é".repeat(MAX_TEXT));
    assert!(parse_logcat(&wide, 0.0, 0.0)[0].text.ends_with("é…"));
}

#[test]
fn an_mp4_is_finished_only_with_its_index() {
    let ftyp = b"\0\0\0\x18ftypisom\0\0\x02\0isommp42".to_vec();
    let mdat = b"\0\0\0\x10mdat\x01\x02\x03\x04\x05\x06\x07\x08".to_vec();
    let moov = b"\0\0\0\x08moov".to_vec();
    assert!(mp4_finished(&[ftyp.clone(), mdat.clone(), moov.clone()].concat()));
    assert!(!mp4_finished(&[ftyp.clone(), mdat.clone()].concat()), "cut off");
    assert!(!mp4_finished(&[mdat.clone(), moov.clone()].concat()), "no ftyp");
    assert!(!mp4_finished(b""));
    // A 64-bit box size is followed.
    let big = [b"\0\0\0\x01mdat\0\0\0\0\0\0\0\x14".to_vec(), vec![7; 4]].concat();
    assert!(mp4_finished(&[ftyp.clone(), big, moov.clone()].concat()));
    // Sizes that would loop or overflow end the walk.
    let zero = b"\0\0\0\0mdat".to_vec();
    assert!(!mp4_finished(&[ftyp.clone(), zero, moov.clone()].concat()));
    let huge = b"\0\0\0\x01mdat\xff\xff\xff\xff\xff\xff\xff\xff".to_vec();
    assert!(!mp4_finished(&[ftyp, huge, moov].concat()));
}

#[test]
fn the_tail_sink_keeps_the_end_and_counts_what_it_dropped() {
    let mut buf = Vec::new();
    let mut sink = Sink::new(&mut buf, Keep::Tail(10));
    for i in 0..100u8 {
        sink.write_all(&[i; 3]).expect("a tail sink takes everything");
    }
    assert_eq!(sink.finish(), 290);
    assert_eq!(buf, [[96u8; 1].as_slice(), &[97; 3], &[98; 3], &[99; 3]].concat());
    // Control: the head sink refuses past its cap.
    let mut head = Vec::new();
    let mut sink = Sink::new(&mut head, Keep::Head(10));
    sink.write_all(&[1; 10]).expect("at the cap");
    assert!(sink.write_all(&[1]).is_err());
}
