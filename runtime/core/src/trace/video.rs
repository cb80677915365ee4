//! A video made of a device's frames (a page's screencast) with `ffmpeg`, when it is on `PATH`: a
//! WebM the viewer plays. Without it the frames stay pictures the viewer shows in turn, and the
//! trace's notes say why.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::device::trace::VideoFrame;

/// The longest an encode may take before it is given up (the trail's frames stay).
const ENCODE_LIMIT: Duration = Duration::from_secs(120);

/// `ffmpeg` on `PATH`, if any.
pub(crate) fn ffmpeg() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("ffmpeg"))
        .find(|p| p.is_file())
}

/// Encodes `frames` (JPEG or PNG, in time order) as a WebM at `out`, each frame shown until the
/// next one came (the last for a second).
pub(crate) fn webm(ffmpeg: &Path, frames: &[VideoFrame], out: &Path) -> Result<(), String> {
    if frames.is_empty() {
        return Err("no frames".into());
    }
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut list = String::new();
    for (i, f) in frames.iter().enumerate() {
        let ext = if f.mime == "image/png" { "png" } else { "jpg" };
        let name = format!("{i:05}.{ext}");
        std::fs::write(work.path().join(&name), &f.bytes).map_err(|e| e.to_string())?;
        let shown = frames
            .get(i + 1)
            .map_or(1.0, |next| ((next.unix_ms - f.unix_ms) / 1000.0).clamp(0.001, 60.0));
        list.push_str(&format!("file '{name}'\nduration {shown:.3}\n"));
    }
    // The concat demuxer takes the last frame's duration only when the frame is listed again.
    if let Some(last) = list.lines().rev().nth(1) {
        list.push_str(&format!("{last}\n"));
    }
    std::fs::write(work.path().join("frames.txt"), list).map_err(|e| e.to_string())?;
    let mut child = Command::new(ffmpeg)
        .current_dir(work.path())
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-y",
            "-f",
            "concat",
            "-safe",
            "0",
        ])
        .args([
            "-i",
            "frames.txt",
            "-vf",
            "scale=trunc(iw/2)*2:trunc(ih/2)*2",
            "-pix_fmt",
            "yuv420p",
        ])
        .args([
            "-c:v",
            "libvpx-vp9",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-b:v",
            "0",
            "-crf",
            "45",
        ])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("ffmpeg did not start: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let mut said = String::new();
                if let Some(mut err) = child.stderr.take() {
                    use std::io::Read as _;
                    let _ = err.read_to_string(&mut said);
                }
                let said: String = said.chars().take(300).collect();
                return Err(format!("ffmpeg failed ({status}): {}", said.trim()));
            }
            Ok(None) if started.elapsed() > ENCODE_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("ffmpeg took over {} s", ENCODE_LIMIT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
}
