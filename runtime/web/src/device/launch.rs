//! Finding and starting Chromium, and making sure it never outlives us: it runs in a process group of
//! its own (killed whole), with a private profile folder (removed), and with `PR_SET_PDEATHSIG` so the
//! kernel kills it if trailblaze itself is killed. The death signal fires when the *thread* that
//! forked the browser ends, so every browser is forked by one thread that lives as long as the process.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::cdp::lock;

/// The names the browser goes by on `PATH`, tried in order.
const NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Where to find the browser: `TRAILBLAZE_CHROMIUM`, else the first of `NAMES` (chromium, chromium-browser, google-chrome) on `PATH`.
pub fn find_chromium() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("TRAILBLAZE_CHROMIUM").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(format!(
                "TRAILBLAZE_CHROMIUM is `{}`, which is not an executable file",
                p.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in NAMES {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(
        "no Chromium found for `--device web`: install Debian's `chromium` package (`apt-get install chromium`), \
         or put `chromium`/`google-chrome` on PATH, or set TRAILBLAZE_CHROMIUM to the browser's path"
            .into(),
    )
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// How to start the browser.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub executable: PathBuf,
    /// Show a window (for a person watching) instead of running headless.
    pub headed: bool,
    /// The first window's size (headed).
    pub window: (u32, u32),
}

/// A started browser: its process group and profile folder, both removed when it is dropped.
pub struct ChromeProcess {
    child: Child,
    pgid: i32,
    slot: usize,
    pub(crate) profile: PathBuf,
}

/// The pipe ends the parent keeps: it writes commands to `to_browser` and reads from `from_browser`.
pub struct Pipes {
    pub to_browser: std::fs::File,
    pub from_browser: std::fs::File,
}

/// Starts the browser with `--remote-debugging-pipe` (fd 3: commands in, fd 4: messages out).
pub fn launch(opts: &LaunchOptions) -> Result<(ChromeProcess, Pipes), String> {
    let profile = profile_dir().map_err(|e| format!("cannot make the browser's profile folder: {e}"))?;
    let stderr = std::fs::File::create(profile.join("chromium-stderr.log")).map_err(|e| e.to_string())?;
    // The browser's own temporary folders (`org.chromium.Chromium.*`, its singleton socket) go
    // inside the profile, so they go with it: on a clean end, on a signal, and in the sweep of
    // profiles left by a trailblaze that was killed outright.
    let tmp = profile.join("tmp");
    std::fs::create_dir(&tmp).map_err(|e| format!("cannot make the browser's temporary folder: {e}"))?;
    let (cmd_r, cmd_w) = pipe().map_err(|e| e.to_string())?;
    let (msg_r, msg_w) = pipe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&opts.executable);
    cmd.args(flags(opts, &profile))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .env("TMPDIR", &tmp)
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    let parent = std::process::id() as i32;
    let (fd_in, fd_out) = (raw(&cmd_r), raw(&msg_w));
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe functions
    // (setpgid, prctl, getppid, fcntl, dup2, _exit) on descriptors the parent keeps open until spawn returns.
    unsafe {
        cmd.pre_exec(move || {
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            // Above 4 first, so that dup2 onto 3 and 4 cannot clobber the other end.
            let a = libc::fcntl(fd_in, libc::F_DUPFD, 10);
            let b = libc::fcntl(fd_out, libc::F_DUPFD, 10);
            if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let child = spawn_from_keeper(cmd).map_err(|e| format!("cannot start {}: {e}", opts.executable.display()))?;
    drop((cmd_r, msg_w));
    let pid = child.id() as i32;
    let slot = register(pid, &profile);
    Ok((
        ChromeProcess {
            child,
            pgid: pid,
            slot,
            profile,
        },
        Pipes {
            to_browser: cmd_w,
            from_browser: msg_r,
        },
    ))
}

fn flags(opts: &LaunchOptions, profile: &Path) -> Vec<String> {
    let mut f: Vec<String> = [
        "--remote-debugging-pipe",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--disable-gpu",
        "--disable-extensions",
        "--disable-default-apps",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-hang-monitor",
        "--disable-popup-blocking",
        "--disable-prompt-on-repost",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-renderer-backgrounding",
        "--disable-ipc-flooding-protection",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--mute-audio",
        "--hide-scrollbars",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // SAFETY: geteuid has no preconditions. Chromium refuses to run its sandbox as root.
    if unsafe { libc::geteuid() } == 0 {
        f.push("--no-sandbox".into());
    }
    if !opts.headed {
        f.push("--headless".into());
    }
    f.push(format!("--window-size={},{}", opts.window.0, opts.window.1));
    f.push(format!("--user-data-dir={}", profile.display()));
    f.push("about:blank".into());
    f
}

fn raw(f: &std::fs::File) -> i32 {
    use std::os::fd::AsRawFd;
    f.as_raw_fd()
}

fn pipe() -> io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two new descriptors into the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else.
    Ok(unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) })
}

/// A fresh private profile folder (mode 0700) under the temporary folder. Folders left by a
/// trailblaze that was killed outright (no cleanup can run then) are removed first.
fn profile_dir() -> io::Result<PathBuf> {
    static N: AtomicU64 = AtomicU64::new(0);
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    sweep_stale_profiles(&base);
    for _ in 0..100 {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!("trailblaze-chromium-{}-{n}-{nanos:x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free profile folder name"))
}

/// Removes the `trailblaze-chromium-<pid>-*` profile folders in `base` whose trailblaze (`pid`) is
/// gone (a live run's are kept), and the `org.chromium.*` folder each one's singleton socket points
/// to (made by browsers started before their temporary folder moved into the profile).
fn sweep_stale_profiles(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for e in entries.flatten().take(10_000) {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("trailblaze-chromium-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let profile = e.path();
        if Path::new(&format!("/proc/{pid}")).exists() || !own_folder(&profile) {
            continue;
        }
        if let Some(dir) = std::fs::read_link(profile.join("SingletonSocket"))
            .ok()
            .and_then(|socket| socket.parent().map(Path::to_path_buf))
            .filter(|dir| is_chromium_temp(base, dir))
        {
            let _ = std::fs::remove_dir_all(dir);
        }
        let _ = std::fs::remove_dir_all(profile);
    }
}

/// A real folder (not a link) of this user's.
fn own_folder(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == me)
}

/// Whether `dir` is a browser's temporary folder right in `base` (a link's target is the profile's
/// word only: nothing else is removed on its say).
fn is_chromium_temp(base: &Path, dir: &Path) -> bool {
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.trim_start_matches('.').starts_with("org.chromium."));
    named && dir.parent() == Some(base) && own_folder(dir)
}

type SpawnRequest = (Command, Sender<io::Result<Child>>);

/// Forks on a thread that never ends, so `PR_SET_PDEATHSIG` fires only when the process dies.
fn spawn_from_keeper(cmd: Command) -> io::Result<Child> {
    static KEEPER: OnceLock<Mutex<Sender<SpawnRequest>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = channel::<SpawnRequest>();
        let _ = std::thread::Builder::new()
            .name("trailblaze-browser-keeper".into())
            .spawn(move || {
                while let Ok((mut cmd, reply)) = rx.recv() {
                    let _ = reply.send(cmd.spawn());
                }
            });
        Mutex::new(tx)
    });
    let (tx, rx) = channel();
    lock(keeper)
        .send((cmd, tx))
        .map_err(|_| io::Error::other("the browser keeper thread is gone"))?;
    rx.recv()
        .map_err(|_| io::Error::other("the browser keeper thread is gone"))?
}

/// Live browsers' process groups, readable from a signal handler (atomics only).
const SLOTS: usize = 256;
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
/// Their profile folders, for the cleanup after a signal (not read in the handler itself).
static PROFILES: Mutex<Vec<(usize, PathBuf)>> = Mutex::new(Vec::new());

fn register(pgid: i32, profile: &Path) -> usize {
    for (i, g) in GROUPS.iter().enumerate() {
        if g.compare_exchange(0, pgid, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            lock(&PROFILES).push((i, profile.to_path_buf()));
            return i;
        }
    }
    usize::MAX
}

fn unregister(slot: usize) {
    if let Some(g) = GROUPS.get(slot) {
        g.store(0, Ordering::Release);
    }
    lock(&PROFILES).retain(|(s, _)| *s != slot);
}

/// Kills every browser this process started and removes their profiles (the SIGINT/SIGTERM path).
pub fn kill_all() {
    for g in &GROUPS {
        let pgid = g.swap(0, Ordering::AcqRel);
        if pgid > 0 {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
    let profiles: Vec<_> = lock(&PROFILES).drain(..).collect();
    for (_, dir) in profiles {
        let _ = std::fs::remove_dir_all(dir);
    }
}

impl ChromeProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the browser's main process has exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// The end of the browser's own log, for an error when it would not start.
    pub fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(self.profile.join("chromium-stderr.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(5)..].join("\n")
    }

    /// Waits up to `grace` for the browser to exit on its own (after `Browser.close`), then kills
    /// its whole group, reaps it and removes its profile.
    pub fn shut_down(&mut self, grace: Duration) {
        let _ = trailblaze_core::budget::poll(None, Instant::now() + grace, Duration::from_millis(10), || {
            Ok::<_, ()>(self.exited().then_some(()))
        });
        // Helpers (renderers, the zygote) may outlive the main process by a moment: kill the group.
        // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
        unsafe { libc::kill(-self.pgid, libc::SIGKILL) };
        let _ = self.child.wait();
        unregister(self.slot);
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

impl Drop for ChromeProcess {
    fn drop(&mut self) {
        if self.pgid > 0 {
            self.shut_down(Duration::ZERO);
            self.pgid = 0;
        }
    }
}

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that kill every browser this process started
/// and remove their profiles, then end the process as the signal would have. Idempotent.
pub fn install_signal_cleanup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let Ok((r, w)) = pipe() else { return };
        WAKE.store(raw(&w), Ordering::Release);
        std::mem::forget(w);
        let started = std::thread::Builder::new()
            .name("trailblaze-signals".into())
            .spawn(move || {
                use std::io::Read;
                let mut r = r;
                let mut sig = [0u8; 1];
                while r.read_exact(&mut sig).is_err() {}
                kill_all();
                let signal = i32::from(sig[0]);
                // SAFETY: restoring the default disposition and raising the signal has no
                // preconditions; the process ends as it would have without the handler.
                unsafe {
                    libc::signal(signal, libc::SIG_DFL);
                    libc::raise(signal);
                }
            });
        if started.is_err() {
            return;
        }
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: `on_signal` only writes one byte to a pipe (async-signal-safe).
            unsafe { libc::signal(signal, on_signal as *const () as libc::sighandler_t) };
        }
    });
}

static WAKE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: i32) {
    let fd = WAKE.load(Ordering::Acquire);
    if fd >= 0 {
        let b = [signal as u8];
        // SAFETY: write(2) is async-signal-safe; the buffer lives on this stack frame.
        unsafe { libc::write(fd, b.as_ptr().cast(), 1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile folder of trailblaze `pid` in `base`, its singleton socket linked to `temp`.
    fn profile(base: &Path, pid: u32, temp: &Path) -> PathBuf {
        let p = base.join(format!("trailblaze-chromium-{pid}-0-test"));
        std::fs::create_dir_all(p.join("Default")).expect("profile");
        std::fs::create_dir_all(temp).expect("temp");
        std::os::unix::fs::symlink(temp.join("SingletonSocket"), p.join("SingletonSocket")).expect("link");
        p
    }

    #[test]
    fn a_dead_runs_profile_and_browser_temp_go_and_a_live_runs_stay() {
        let dir = tempfile::tempdir().expect("temp dir");
        let base = dir.path();
        // No process has this id: above the kernel's largest pid.
        let dead = 4_000_000_000;
        let stale = profile(base, dead, &base.join("org.chromium.Chromium.stale1"));
        let live_temp = base.join("org.chromium.Chromium.live1");
        let live = profile(base, std::process::id(), &live_temp);
        // A dead run's link pointing elsewhere than a browser temp folder in `base`: only the
        // profile goes.
        let elsewhere = base.join("keep/org.chromium.Chromium.deep");
        let odd = base.join(format!("trailblaze-chromium-{}-1-test", dead + 1));
        std::fs::create_dir_all(&odd).expect("odd");
        std::fs::create_dir_all(&elsewhere).expect("elsewhere");
        std::os::unix::fs::symlink(elsewhere.join("SingletonSocket"), odd.join("SingletonSocket")).expect("link");
        let named_wrong = base.join("mine");
        let wrong = profile(base, dead + 2, &named_wrong);
        sweep_stale_profiles(base);
        assert!(!stale.exists(), "the dead run's profile stayed");
        assert!(
            !base.join("org.chromium.Chromium.stale1").exists(),
            "its browser temp folder stayed"
        );
        assert!(live.exists() && live_temp.exists(), "a live run's folders were removed");
        assert!(!odd.exists() && elsewhere.exists());
        assert!(!wrong.exists() && named_wrong.exists());
    }
}
