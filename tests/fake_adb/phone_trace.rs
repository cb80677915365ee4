//! The fake phone's trace commands (`date`, `logcat`, `screenrecord`, `kill`, `rm`), over its
//! [`TraceState`](super::trace::TraceState).

use std::time::{Duration, Instant};

use super::phone::{Phone, Run};
use super::trace::{LogEntry, MP4_HEAD, MP4_MOOV, Recording};

impl Phone {
    /// The phone's clock, Unix ms.
    pub fn now_ms(&self) -> i64 {
        let host = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        host + self.trace.clock_skew_ms
    }

    /// Logs a line now (the phone's clock).
    pub fn log(&mut self, level: char, tag: &str, msg: &str) {
        let ms = self.now_ms();
        self.log_at(ms, level, tag, msg);
    }

    /// Logs a line at the phone's time `ms`.
    pub fn log_at(&mut self, ms: i64, level: char, tag: &str, msg: &str) {
        self.trace.log.push(LogEntry {
            ms,
            pid: 1234,
            tid: 1256,
            level,
            tag: tag.to_owned(),
            msg: msg.to_owned(),
            raw: false,
        });
    }

    /// A line printed as it is, at the phone's time `ms` (for `-T`).
    pub fn log_raw(&mut self, ms: i64, text: &str) {
        self.trace.log.push(LogEntry {
            ms,
            pid: 0,
            tid: 0,
            level: 'I',
            tag: String::new(),
            msg: text.to_owned(),
            raw: true,
        });
    }

    pub(super) fn date(&self, args: &[&str]) -> Run {
        let ms = self.now_ms();
        match args {
            ["+%s.%N"] => Run::ok(format!("{}.{:09}\n", ms / 1000, (ms % 1000) * 1_000_000)),
            ["+%s"] => Run::ok(format!("{}\n", ms / 1000)),
            _ => Run::fail(1, "date: the fake knows +%s and +%s.%N only\n"),
        }
    }

    pub(super) fn logcat(&self, args: &[&str]) -> Run {
        if self.trace.logcat_denied {
            return Run::fail(
                1,
                "logcat: Unable to open log device '/dev/log/main': Permission denied\n",
            );
        }
        let (mut dump, mut format, mut since) = (false, None, None);
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match *a {
                "-d" => dump = true,
                "-v" => format = it.next().copied(),
                "-T" | "-t" => {
                    dump |= *a == "-t";
                    since = it.next().copied();
                    if since.is_none() {
                        return Run::fail(1, format!("logcat: option requires an argument -- '{}'\n", &a[1..]));
                    }
                }
                other => return Run::fail(1, format!("logcat: the fake does not know {other}\n")),
            }
        }
        if !dump {
            return Run::fail(1, "logcat: the fake only dumps (-d): it would never end\n");
        }
        if format != Some("epoch") {
            return Run::fail(1, "logcat: the fake prints -v epoch only\n");
        }
        let entries: Vec<&LogEntry> = match since {
            None => self.trace.log.iter().collect(),
            Some(count) if count.bytes().all(|b| b.is_ascii_digit()) => {
                let n: usize = count.parse().unwrap_or(0);
                let skip = self.trace.log.len().saturating_sub(n);
                self.trace.log.iter().skip(skip).collect()
            }
            Some(time) => match epoch_ms(time) {
                Some(from) => self.trace.log.iter().filter(|e| e.ms >= from).collect(),
                None => return Run::fail(1, format!("logcat: -T '{time}' not in time format\n")),
            },
        };
        let mut out = String::from("--------- beginning of main\n");
        for e in entries {
            if e.raw {
                out.push_str(&e.msg);
                out.push('\n');
                continue;
            }
            for line in e.msg.split('\n') {
                out.push_str(&format!(
                    "{:>5}.{:03} {:>5} {:>5} {} {:<8}: {line}\n",
                    e.ms / 1000,
                    e.ms % 1000,
                    e.pid,
                    e.tid,
                    e.level,
                    e.tag
                ));
            }
        }
        Run::ok(out)
    }

    /// `screenrecord [--bit-rate N] [--time-limit S] [--size WxH] [--verbose] FILE` as process `pid`.
    pub(super) fn screenrecord(&mut self, args: &[&str], pid: u32) -> Run {
        if self.trace.no_screenrecord {
            return Run::fail(127, "/system/bin/sh: screenrecord: inaccessible or not found\n");
        }
        let mut limit = 180u64;
        let mut file = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match *a {
                "--bit-rate" | "--size" => {
                    it.next();
                }
                "--time-limit" => match it.next().and_then(|s| s.parse::<u64>().ok()) {
                    Some(s) if (1..=180).contains(&s) => limit = s,
                    _ => return Run::fail(1, "Time limit must be 1-180 seconds\n"),
                },
                "--verbose" => {}
                f if !f.starts_with('-') && file.is_none() => file = Some(f.to_owned()),
                other => return Run::fail(2, format!("Unknown option {other}\n")),
            }
        }
        let Some(path) = file.filter(|f| f.starts_with('/')) else {
            return Run::fail(2, "Must specify output file (see --help).\n");
        };
        self.files.insert(path.clone(), MP4_HEAD.to_vec());
        self.trace.recorded.push(path.clone());
        self.trace.recordings.push(Recording {
            pid,
            path,
            started: Instant::now(),
            limit: Duration::from_secs(limit),
        });
        Run {
            hold: Some(pid),
            ..Run::ok("")
        }
    }

    /// `kill [-SIGNAL] PID`: SIGINT makes a recording finish its file; any other signal cuts it off.
    pub(super) fn kill(&mut self, args: &[&str]) -> Run {
        let (signal, pid) = match args {
            [pid] => ("TERM", *pid),
            [sig, pid] if sig.starts_with('-') => (sig.trim_start_matches('-').trim_start_matches("SIG"), *pid),
            _ => return Run::fail(1, "kill: usage: kill [-SIGNAL] PID\n"),
        };
        let signal = match signal {
            "2" | "INT" => "INT",
            "9" | "KILL" => "KILL",
            "15" | "TERM" => "TERM",
            other => return Run::fail(1, format!("/system/bin/sh: kill: {other}: invalid signal\n")),
        };
        let Some(pid) = pid.parse::<u32>().ok() else {
            return Run::fail(
                1,
                format!("/system/bin/sh: kill: {pid}: arguments must be jobs or process IDs\n"),
            );
        };
        let Some(at) = self.trace.recordings.iter().position(|r| r.pid == pid) else {
            return Run::fail(1, format!("/system/bin/sh: kill: {pid}: No such process\n"));
        };
        self.trace.signals.push((pid, signal.to_owned()));
        let r = self.trace.recordings.remove(at);
        self.end_recording(r, signal == "INT", if signal == "KILL" { 137 } else { 0 });
        Run::ok("")
    }

    fn end_recording(&mut self, r: Recording, finished: bool, exit: u8) {
        if finished && let Some(file) = self.files.get_mut(&r.path) {
            file.extend_from_slice(MP4_MOOV);
        }
        self.trace.exits.push((r.pid, exit));
    }

    /// Ends the recordings past their time limit (finishing their files); whether `pid` still runs,
    /// and its exit status once it ended.
    pub fn recording(&mut self, pid: u32) -> Result<(), u8> {
        let (done, running): (Vec<Recording>, Vec<Recording>) = std::mem::take(&mut self.trace.recordings)
            .into_iter()
            .partition(|r| r.started.elapsed() >= r.limit);
        self.trace.recordings = running;
        for r in done {
            self.end_recording(r, true, 0);
        }
        if self.trace.recordings.iter().any(|r| r.pid == pid) {
            return Ok(());
        }
        Err(self
            .trace
            .exits
            .iter()
            .find(|(p, _)| *p == pid)
            .map_or(0, |(_, code)| *code))
    }

    pub(super) fn rm(&mut self, args: &[&str]) -> Run {
        let force = args.first() == Some(&"-f");
        let mut run = Run::ok("");
        for path in args.iter().skip(usize::from(force)) {
            if self.files.remove(*path).is_none() && !force {
                run = Run::fail(1, format!("rm: {path}: No such file or directory\n"));
            }
        }
        run
    }
}

/// `sssss.mmm` as Unix ms.
fn epoch_ms(s: &str) -> Option<i64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty() || frac.is_empty() || !(secs.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())) {
        return None;
    }
    let ms: String = frac.chars().chain("000".chars()).take(3).collect();
    Some(secs.parse::<i64>().ok()? * 1000 + ms.parse::<i64>().ok()?)
}
