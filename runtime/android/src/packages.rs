//! What `pm list packages` and `dumpsys package packages` print, into app ids and [`InstalledApp`]s.

use trailblaze_core::device::InstalledApp;

/// `package:<id>` lines, sorted.
pub fn parse_list(out: &str) -> Vec<String> {
    let mut ids: Vec<String> = out
        .lines()
        .filter_map(|l| l.trim().strip_prefix("package:"))
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The `Packages:` section of `dumpsys package packages`: one `Package [<id>] (<hash>):` block per
/// app, whose indented lines carry `codePath=`, `versionCode=`, `versionName=` and `flags=[ ... ]`
/// (`SYSTEM` among them for a platform app). Later sections (`Hidden system packages:`, which
/// repeats updated system apps) are not read. Sorted by id.
pub fn parse_dumpsys(out: &str) -> Vec<InstalledApp> {
    let mut apps: Vec<InstalledApp> = Vec::new();
    let mut in_packages = false;
    for line in out.lines() {
        let trimmed = line.trim();
        if !line.starts_with(' ') && !trimmed.is_empty() {
            // A top-level heading: only the first `Packages:` section lists installed apps.
            in_packages = trimmed == "Packages:" && apps.is_empty();
            continue;
        }
        if !in_packages {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("Package [") {
            if let Some((id, _)) = rest.split_once(']') {
                apps.push(InstalledApp::new(id, false));
            }
            continue;
        }
        let Some(app) = apps.last_mut() else { continue };
        if let Some(path) = trimmed.strip_prefix("codePath=") {
            app.install_path.get_or_insert_with(|| path.to_owned());
        } else if let Some(rest) = trimmed.strip_prefix("versionCode=") {
            let code = rest.split_whitespace().next().unwrap_or_default();
            app.build_number.get_or_insert_with(|| code.to_owned());
        } else if let Some(name) = trimmed.strip_prefix("versionName=") {
            // An app without a version prints `versionName=null`.
            if name != "null" && !name.is_empty() {
                app.version.get_or_insert_with(|| name.to_owned());
            }
        } else if let Some(flags) = trimmed.strip_prefix("flags=[") {
            app.is_system_app |= flags.split_whitespace().any(|f| f == "SYSTEM");
        }
    }
    apps.sort_by(|a, b| a.app_id.cmp(&b.app_id));
    apps.dedup_by(|a, b| a.app_id == b.app_id);
    apps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shortened from an Android 15 emulator: a system app, a user app, the per-user lines, and the
    /// later section that repeats an updated system app.
    const DUMPSYS: &str = "\
Packages:
  Package [com.android.settings] (1a2b3c):
    userId=1000
    codePath=/system/priv-app/Settings
    versionCode=35 minSdk=24 targetSdk=35
    versionName=15
    flags=[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ]
    privateFlags=[ PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE ]
    User 0: ceDataInode=111 installed=true hidden=false stopped=false enabled=0
  Package [com.example.app] (4d5e6f):
    codePath=/data/app/~~abc==/com.example.app-xyz==
    versionCode=6940515 minSdk=26 targetSdk=34
    versionName=6.94
    flags=[ HAS_CODE ALLOW_CLEAR_USER_DATA ALLOW_BACKUP ]
  Package [dev.runner] (777):
    codePath=/data/app/~~r==/dev.runner-q==
    versionCode=0 minSdk=24 targetSdk=34
    versionName=null
    flags=[ HAS_CODE ]

Hidden system packages:
  Package [com.android.chrome] (999):
    codePath=/product/app/Chrome
    flags=[ SYSTEM ]
";

    #[test]
    fn dumpsys_blocks_become_apps_sorted_by_id() {
        let apps = parse_dumpsys(DUMPSYS);
        let ids: Vec<&str> = apps.iter().map(|a| a.app_id.as_str()).collect();
        assert_eq!(ids, ["com.android.settings", "com.example.app", "dev.runner"]);
        let settings = &apps[0];
        assert!(settings.is_system_app);
        assert_eq!(settings.version.as_deref(), Some("15"));
        assert_eq!(settings.build_number.as_deref(), Some("35"));
        assert_eq!(settings.install_path.as_deref(), Some("/system/priv-app/Settings"));
        assert!(!apps[1].is_system_app, "no SYSTEM flag: a user app");
        assert_eq!(apps[2].version, None, "`versionName=null` is no version");
        assert_eq!(apps[2].build_number.as_deref(), Some("0"));
        assert!(apps.iter().all(|a| a.label.is_none()));
    }

    #[test]
    fn list_lines_become_sorted_ids_and_other_lines_are_ignored() {
        assert_eq!(
            parse_list("package:com.b\npackage:com.a\n\nWARNING: linker\npackage:com.a\n"),
            ["com.a", "com.b"]
        );
        // Control: nothing that looks like a package gives nothing.
        assert!(parse_list("Error: no\n").is_empty());
        assert!(parse_dumpsys("Packages:\n  (none)\n").is_empty());
    }
}
