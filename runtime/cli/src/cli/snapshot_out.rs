//! What `snapshot` prints and writes, on a fresh device or in a session: the text (or JSON), the
//! picture file `--screenshot` names (its format checked against the file's extension), and the
//! refusal of `--url` on a device without pages.

use anyhow::anyhow;
use serde_json::{Value, json};

use super::Failure;
use super::output::{err, out};

/// `--url` anywhere but on the web: a usage error naming the flag.
pub fn url_needs_web(device: &str) -> Failure {
    super::usage_help(
        format!("--url opens a page, which only a browser has: the device here is `{device}`"),
        "add --device web, or open the app with `trailblaze tool launchApp appId=...` instead",
    )
}

/// The picture's format `path`'s extension names (`--screenshot`), before anything is opened.
pub fn screenshot_mime(path: &std::path::Path) -> Result<&'static str, Failure> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "png" => Ok("image/png"),
        "jpg" | "jpeg" => Ok("image/jpeg"),
        "svg" => Ok("image/svg+xml"),
        _ => Err(super::usage_help(
            format!(
                "--screenshot {}: name the file .png, .jpg, .jpeg or .svg (the picture's format)",
                path.display()
            ),
            "the simulator's pictures are SVG; Android's, iOS's and the web's are PNG",
        )),
    }
}

/// Writes `shot` to `path` when its format is the one the extension names (`--screenshot`).
pub fn write_screenshot(path: &std::path::Path, mime: &str, bytes: &[u8]) -> Result<(), Failure> {
    let wanted = screenshot_mime(path)?;
    if wanted != mime {
        let ext = match mime {
            "image/png" => ".png",
            "image/jpeg" => ".jpg",
            "image/svg+xml" => ".svg",
            _ => "another extension",
        };
        return Err(super::usage_help(
            format!(
                "--screenshot {}: this device's picture is {mime}, not {wanted}",
                path.display()
            ),
            format!("name the file {ext}"),
        ));
    }
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Failed(anyhow!("--screenshot {}: cannot write it: {e}", path.display())))
}

/// Prints a snapshot result as `snapshot` does, with the picture's path when one was written.
pub fn print_snapshot(v: &Value, json_out: bool, shot: Option<&std::path::Path>) {
    if json_out {
        let mut v = v.clone();
        if let Some(p) = shot {
            v["screenshot"] = json!(p);
        }
        super::output::out_json!(&v);
    } else {
        out!("{}", v["text"].as_str().unwrap_or_default().trim_end_matches('\n'));
        if let Some(p) = shot {
            err!("screenshot: {}", p.display());
        }
    }
}
