//! What a device keeps for a trail's trace besides its screens: the page's requests (HAR) and
//! console, the phone's own log, a video. A device starts keeping them at [`Device::trace_begin`]
//! and hands them over at [`Device::trace_end`]; a device with none of them keeps nothing.
//!
//! [`Device::trace_begin`]: super::Device::trace_begin
//! [`Device::trace_end`]: super::Device::trace_end

use serde::Serialize;

/// What the session asks a device to keep while a trail runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// Keep a video of the screen (Android `screenrecord`, a page's screencast), as the device can.
    pub video: bool,
}

/// What a device kept between `trace_begin` and `trace_end`. Every time is a Unix time in
/// milliseconds (the viewer filters each list to a step's time window).
#[derive(Debug, Clone, Default)]
pub struct DeviceTrace {
    /// HAR 1.2 `log.entries`, in the order the requests were sent (the web). Bodies only of failed
    /// requests (status >= 400 or no response), each capped at [`MAX_BODY_BYTES`].
    pub network: Vec<serde_json::Value>,
    /// The page's console lines and uncaught errors (the web), or an app's console.
    pub console: Vec<TraceLine>,
    /// The device's own log for the window (Android `logcat`).
    pub device_log: Vec<TraceLine>,
    /// The screen's video for the window.
    pub video: Option<Video>,
    /// What the device could not keep and why (`screenrecord` is missing, ...): shown in the viewer.
    pub notes: Vec<String>,
}

impl DeviceTrace {
    pub fn is_empty(&self) -> bool {
        self.network.is_empty()
            && self.console.is_empty()
            && self.device_log.is_empty()
            && self.video.is_none()
            && self.notes.is_empty()
    }
}

/// One line of a console or a device log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceLine {
    pub unix_ms: f64,
    /// `log`, `info`, `warn`, `error`, `debug` (a console); `V` `D` `I` `W` `E` `F` (logcat).
    pub level: String,
    /// Where it came from: a logcat tag, `page`, `exception`, a script tool's name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub source: String,
    pub text: String,
}

/// A video of the screen.
#[derive(Debug, Clone)]
pub enum Video {
    /// A finished file (`video/mp4` from `screenrecord`, `video/webm`): its bytes.
    File {
        mime: String,
        bytes: Vec<u8>,
        started_unix_ms: f64,
    },
    /// Pictures of the screen as it changed (a page's screencast), each with its time; the viewer
    /// plays them as a video, and `ffmpeg` (when on `PATH`) makes a WebM of them.
    Frames(Vec<VideoFrame>),
}

#[derive(Debug, Clone)]
pub struct VideoFrame {
    pub unix_ms: f64,
    /// `image/jpeg` or `image/png`.
    pub mime: String,
    pub bytes: Vec<u8>,
}

/// The most of a failed request's body a trace keeps.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The most lines of a console or a device log a trace keeps (the last ones).
pub const MAX_LINES: usize = 20_000;
/// The most requests a trace keeps (the first ones).
pub const MAX_REQUESTS: usize = 5_000;

/// The time now as a Unix time in milliseconds.
pub fn unix_ms_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// A Unix time (ms) as ISO 8601 in UTC with milliseconds (`2025-12-06T05:46:40.123Z`): HAR's
/// `startedDateTime`. A time before 1970 or not finite reads as 1970's first instant.
pub fn iso8601(unix_ms: f64) -> String {
    let ms = if unix_ms.is_finite() && unix_ms > 0.0 {
        unix_ms as i64
    } else {
        0
    };
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let (h, m, sec, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{milli:03}Z")
}

/// Days since 1970-01-01 as (year, month, day) of the proleptic Gregorian calendar (Howard
/// Hinnant's civil-from-days, in 400-year eras).
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}
