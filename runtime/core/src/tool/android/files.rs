//! The Android-only tools that put files on the device: text into Downloads, bytes at a path, an
//! image into the media store. The bytes travel over adb's sync protocol (`Device::write_file`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::results::Written;
use super::{ANDROID, HIDDEN_UNRECORDED};
use crate::device::Platform;
use crate::device::extras::{DOWNLOADS, PICTURES};
use crate::tool::{BuiltinTool, Outcome, ToolCx, ToolFailure, ToolFlags, results};

/// Writes a UTF-8 text file into the device's public Downloads folder (e.g. a setup file an app
/// reads when it starts).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteFileToDownloads {
    /// The file's name, without folders, e.g. `setup.json`.
    pub file_name: String,
    /// The file's text.
    pub content: String,
}

impl BuiltinTool for WriteFileToDownloads {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Written>()
    }
    const NAME: &'static str = "android_writeFileToDownloads";
    const FLAGS: ToolFlags = HIDDEN_UNRECORDED;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let name = &self.file_name;
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
            return Err("`fileName` must be a file name with no folder (no `/`, `\\`, `.` or `..`)".into());
        }
        let path = format!("{DOWNLOADS}/{name}");
        write(cx, path, self.content.as_bytes())
    }
}

/// Writes bytes, given as base64, to an absolute path on the device, creating its folders and
/// replacing any file there (no media-store entry: see `android_writeImageToMediaStore`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteBytesToFile {
    /// Where to write, starting with `/`, e.g. `/sdcard/Download/setup.bin`.
    pub device_path: String,
    /// The file's bytes in standard base64.
    pub base64_content: String,
}

impl BuiltinTool for WriteBytesToFile {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Written>()
    }
    const NAME: &'static str = "android_writeBytesToFile";
    const FLAGS: ToolFlags = HIDDEN_UNRECORDED;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        if !self.device_path.starts_with('/') {
            return Err("`devicePath` must be an absolute path (starting with `/`)".into());
        }
        let bytes = decode_base64(&self.base64_content).ok_or("`base64Content` is not valid base64")?;
        write(cx, self.device_path, &bytes)
    }
}

/// Writes an image into the device's public Pictures folder and registers it in the media store,
/// so the gallery and photo pickers offer it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteImageToMediaStore {
    /// The file's name: letters, digits, `.`, `_` and `-` only, e.g. `receipt.png`.
    pub file_name: String,
    /// The image's bytes in standard base64.
    pub base64_content: String,
    /// The image's type (default `image/png`); the media store reads it from the name's extension.
    #[serde(default)]
    pub mime_type: Option<String>,
}

impl BuiltinTool for WriteImageToMediaStore {
    fn result_schema() -> Option<serde_json::Value> {
        results::schema::<Written>()
    }
    const NAME: &'static str = "android_writeImageToMediaStore";
    const FLAGS: ToolFlags = HIDDEN_UNRECORDED;
    const PLATFORMS: &'static [Platform] = ANDROID;
    fn run(self, cx: &mut ToolCx<'_>) -> Result<Outcome, ToolFailure> {
        let name = &self.file_name;
        let plain = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
        if name.is_empty() || name == "." || name == ".." || !name.chars().all(plain) {
            return Err("`fileName` may hold only letters, digits, `.`, `_` and `-` (and is not `.` or `..`)".into());
        }
        if !self.mime_type.as_deref().unwrap_or("image/png").starts_with("image/") {
            return Err("`mimeType` must be an image type (`image/...`)".into());
        }
        let bytes = decode_base64(&self.base64_content).ok_or("`base64Content` is not valid base64")?;
        let path = format!("{PICTURES}/{name}");
        let written = write(cx, path.clone(), &bytes)?;
        // MediaProvider's own scan registers the file as an Images row.
        let scan = [
            "content",
            "call",
            "--uri",
            "content://media",
            "--method",
            "scan_file",
            "--arg",
            &path,
        ];
        let argv: Vec<String> = scan.iter().map(|s| s.to_string()).collect();
        cx.screen.with_device(|d| d.shell(&argv))?;
        Ok(written)
    }
}

fn write(cx: &mut ToolCx<'_>, path: String, bytes: &[u8]) -> Result<Outcome, ToolFailure> {
    cx.screen.with_device(|d| d.write_file(&path, bytes))?;
    results::done(Written {
        path,
        bytes: bytes.len(),
    })
}

/// Standard base64 (RFC 4648, `+/`), padded or not; `None` for anything else (whitespace included).
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    let padding = text.len() - body.len();
    if padding > 2 || (padding > 0 && !text.len().is_multiple_of(4)) || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_rfc_4648_vectors_and_refuses_what_is_not_base64() {
        // RFC 4648's test vectors, its section 10.
        let plain = ["", "f", "fo", "foo", "foob", "fooba", "foobar"];
        let encoded = ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"];
        let vectors = plain.into_iter().zip(encoded);
        for (plain, encoded) in vectors {
            assert_eq!(decode_base64(encoded).as_deref(), Some(plain.as_bytes()), "{encoded}");
            assert_eq!(
                decode_base64(encoded.trim_end_matches('=')).as_deref(),
                Some(plain.as_bytes())
            );
        }
        assert_eq!(decode_base64("AP+A").as_deref(), Some(&b"\x00\xff\x80"[..]));
        // Controls: each of these is refused.
        for bad in ["Zm9v YmFy", "Zm9v\n", "Z", "Zm9=v", "Zm===", "Zm9v!", "Zg="] {
            assert_eq!(decode_base64(bad), None, "{bad:?}");
        }
    }
}
