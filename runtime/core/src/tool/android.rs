//! The original's Android built-ins that need the device's shell or its extras (`scrollUntilTextIsVisible`,
//! `hideKeyboard`, `openUrl`, `android_*`, `mobile_*`, `networkConnection`). Names, arguments and flags
//! follow Trailblaze's `@TrailblazeToolClass` types, so its recordings read here unchanged; what each
//! sends to a phone is in docs/android.md.

mod files;
mod mobile;
pub mod results;
mod scroll;
mod shell;

use super::{BuiltinEntry, ToolFlags};
use crate::device::Platform;

/// Callable by trails and scripts, never offered to the LLM, never recorded (the original's
/// composition primitives: a shell command, a broadcast, a file).
const HIDDEN_UNRECORDED: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: false,
    read_only: false,
};

/// Hidden queries that leave the screen as it was.
const HIDDEN_READ_ONLY: ToolFlags = ToolFlags {
    surface_to_llm: false,
    is_recordable: true,
    read_only: true,
};

/// `android_*` tools.
const ANDROID: &[Platform] = &[Platform::Android];
/// `mobile_*` tools and the others the original offers on phones only.
const MOBILE: &[Platform] = &[Platform::Android, Platform::Ios];

/// Every built-in of this module.
pub fn entries() -> Vec<BuiltinEntry> {
    vec![
        BuiltinEntry::of::<scroll::ScrollUntilTextIsVisible>(),
        BuiltinEntry::of::<mobile::HideKeyboard>(),
        BuiltinEntry::of::<mobile::OpenUrl>(),
        BuiltinEntry::of::<mobile::NetworkConnection>(),
        BuiltinEntry::of::<mobile::SetClipboard>(),
        BuiltinEntry::of::<mobile::PasteClipboard>(),
        BuiltinEntry::of::<mobile::ClearAppData>(),
        BuiltinEntry::of::<mobile::ListInstalledApps>(),
        BuiltinEntry::of::<mobile::ListInstalledAppsDetailed>(),
        BuiltinEntry::of::<shell::AdbShell>(),
        BuiltinEntry::of::<shell::SendBroadcast>(),
        BuiltinEntry::of::<shell::GrantPermission>(),
        BuiltinEntry::of::<shell::GrantPermissions>(),
        BuiltinEntry::of::<shell::GrantAppOpsPermission>(),
        BuiltinEntry::of::<shell::SystemUiDemoMode>(),
        BuiltinEntry::of::<files::WriteFileToDownloads>(),
        BuiltinEntry::of::<files::WriteBytesToFile>(),
        BuiltinEntry::of::<files::WriteImageToMediaStore>(),
    ]
}
