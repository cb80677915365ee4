//! What a call may spend: the limits every script runtime enforces, and the deadline of the running
//! top-level call. The deadline is atomic so an interrupt handler, a subprocess watchdog or another
//! thread (a cancel request from an MCP client or an embedder) can read or end it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The limits of one top-level call, in one place.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Time a top-level call's scripts may run, device actions excluded (the script clock pauses
    /// while a built-in tool works the device).
    pub timeout: Duration,
    /// Wall-clock time for the whole top-level call, device actions included.
    pub wall_timeout: Duration,
    /// Memory a session's JS heap may hold (embedded engine).
    pub memory_bytes: usize,
    /// Native stack JS may use (recursion depth; embedded engine).
    pub stack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(10),
            wall_timeout: Duration::from_secs(300),
            memory_bytes: 256 << 20,
            stack_bytes: 4 << 20,
        }
    }
}

/// Why a call's deadline ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    TimedOut,
    /// The wall-clock budget (device time included) ran out.
    WallTimedOut,
    Cancelled,
    /// The top-level call already returned (something it left behind tried to go on).
    Returned,
}

/// The deadline of the running top-level call, shared by the session and its script runtimes.
#[derive(Debug)]
pub struct Deadline {
    base: Instant,
    /// The script clock's deadline, nanoseconds after `base`; 0 means no call is running.
    at: AtomicU64,
    /// The wall clock's deadline, nanoseconds after `base`.
    wall_at: AtomicU64,
    /// When the script clock was paused (a device action), nanoseconds after `base`; 0 when running.
    paused_since: AtomicU64,
    timed_out: AtomicBool,
    wall_timed_out: AtomicBool,
    cancelled: AtomicBool,
    closed: AtomicBool,
}

impl Deadline {
    pub fn new() -> Arc<Deadline> {
        Arc::new(Deadline {
            base: Instant::now(),
            at: AtomicU64::new(0),
            wall_at: AtomicU64::new(0),
            paused_since: AtomicU64::new(0),
            timed_out: AtomicBool::new(false),
            wall_timed_out: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            closed: AtomicBool::new(false),
        })
    }

    fn now(&self) -> u64 {
        (self.base.elapsed().as_nanos() as u64).max(1)
    }

    /// Starts both clocks for one top-level call.
    pub fn begin(&self, limits: &Limits) {
        let now = self.base.elapsed();
        let at = now + limits.timeout;
        self.wall_at.store(
            ((now + limits.wall_timeout).as_nanos() as u64).max(1),
            Ordering::Relaxed,
        );
        self.paused_since.store(0, Ordering::Relaxed);
        self.timed_out.store(false, Ordering::Relaxed);
        self.wall_timed_out.store(false, Ordering::Relaxed);
        self.cancelled.store(false, Ordering::Relaxed);
        self.closed.store(false, Ordering::Relaxed);
        self.at.store((at.as_nanos() as u64).max(1), Ordering::Relaxed);
    }

    /// Pauses the script clock while the device works (the wall clock runs on).
    pub fn pause(&self) {
        let _ = self
            .paused_since
            .compare_exchange(0, self.now(), Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Resumes the script clock, moving its deadline by the time paused.
    pub fn resume(&self) {
        let since = self.paused_since.swap(0, Ordering::Relaxed);
        if since != 0 {
            let paused = self.now().saturating_sub(since);
            let _ = self.at.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |at| {
                (at != 0).then(|| at + paused)
            });
        }
    }

    /// Stops the clock: no call is running.
    pub fn end(&self) {
        self.at.store(0, Ordering::Relaxed);
    }

    /// The call has returned: whatever it left behind (an async chain, a microtask loop) stops at
    /// its runtime's next check, and no tool call is dispatched for it any more.
    pub fn close(&self) {
        if self.at.load(Ordering::Relaxed) != 0 {
            self.closed.store(true, Ordering::Relaxed);
        }
    }

    /// Ends the running call as soon as its runtime next checks (a no-op between calls).
    pub fn cancel(&self) {
        if self.at.load(Ordering::Relaxed) != 0 {
            self.cancelled.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the running call must stop now; remembers why.
    pub fn expired(&self) -> bool {
        if self.cancelled.load(Ordering::Relaxed) || self.closed.load(Ordering::Relaxed) {
            return true;
        }
        let at = self.at.load(Ordering::Relaxed);
        if at == 0 {
            return false;
        }
        let now = self.now();
        if now >= self.wall_at.load(Ordering::Relaxed) {
            self.wall_timed_out.store(true, Ordering::Relaxed);
            return true;
        }
        if self.paused_since.load(Ordering::Relaxed) == 0 && now >= at {
            self.timed_out.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Time left in the running call; `None` when no call is running.
    pub fn remaining(&self) -> Option<Duration> {
        let at = self.at.load(Ordering::Relaxed);
        if at == 0 {
            return None;
        }
        let wall = self.wall_at.load(Ordering::Relaxed);
        Some(Duration::from_nanos(
            at.min(wall).saturating_sub(self.base.elapsed().as_nanos() as u64),
        ))
    }

    /// When the running call's wall clock runs out; `None` when no call is running.
    pub fn wall_deadline(&self) -> Option<Instant> {
        if self.at.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let wall = Duration::from_nanos(self.wall_at.load(Ordering::Relaxed));
        Some(self.base + wall)
    }

    /// Why the running call was stopped, if it was.
    pub fn stopped(&self) -> Option<Stop> {
        if self.closed.load(Ordering::Relaxed) {
            Some(Stop::Returned)
        } else if self.cancelled.load(Ordering::Relaxed) {
            Some(Stop::Cancelled)
        } else if self.wall_timed_out.load(Ordering::Relaxed) {
            Some(Stop::WallTimedOut)
        } else if self.timed_out.load(Ordering::Relaxed) {
            Some(Stop::TimedOut)
        } else {
            None
        }
    }

    /// The message a stopped call fails with.
    pub fn stop_message(&self, limits: &Limits) -> Option<String> {
        self.stopped().map(|s| match s {
            Stop::TimedOut => format!("exceeded its time limit of {} ms", limits.timeout.as_millis()),
            Stop::WallTimedOut => format!(
                "exceeded its wall-clock limit of {} ms (device time included)",
                limits.wall_timeout.as_millis()
            ),
            Stop::Cancelled => "cancelled".to_string(),
            Stop::Returned => "its top-level call has already returned".to_string(),
        })
    }
}

/// Cancels the running call of one session from any thread.
#[derive(Debug, Clone)]
pub struct CancelHandle(pub(crate) Arc<Deadline>);

impl CancelHandle {
    /// Ends the session's running call (if any) at its runtime's next check; the call fails with
    /// `cancelled` and the session stays usable.
    pub fn cancel(&self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_between_calls_is_a_no_op_and_during_a_call_stops_it() {
        let d = Deadline::new();
        d.cancel();
        d.begin(&Limits {
            timeout: Duration::from_secs(60),
            ..Limits::default()
        });
        assert!(!d.expired(), "a cancel before the call must not stop it");
        d.cancel();
        assert!(d.expired());
        assert_eq!(d.stopped(), Some(Stop::Cancelled));
        d.begin(&Limits {
            timeout: Duration::from_secs(60),
            ..Limits::default()
        });
        assert_eq!(d.stopped(), None, "a new call starts clean");
    }

    #[test]
    fn a_zero_timeout_expires_and_says_so() {
        let d = Deadline::new();
        d.begin(&Limits {
            timeout: Duration::ZERO,
            ..Limits::default()
        });
        assert!(d.expired());
        assert_eq!(d.stopped(), Some(Stop::TimedOut));
        d.end();
        assert!(d.remaining().is_none());
    }
}

/// Every wait-until of the host, one loop: asks `attempt` until it gives a value (`Ok(Some)`), fails
/// (`Err`), `until` passes or the call's `deadline` ends (then `Ok(None)`). Tries are `every`
/// apart; the wait between them notices a cancel within [`SLICE`].
pub fn poll<T, E>(
    deadline: Option<&Deadline>,
    until: Instant,
    every: Duration,
    mut attempt: impl FnMut() -> Result<Option<T>, E>,
) -> Result<Option<T>, E> {
    let stopped = || deadline.is_some_and(Deadline::expired);
    loop {
        if let Some(v) = attempt()? {
            return Ok(Some(v));
        }
        let next = Instant::now() + every;
        loop {
            let now = Instant::now();
            if now >= until || stopped() {
                return Ok(None);
            }
            if now >= next {
                break;
            }
            std::thread::sleep(SLICE.min(next - now).min(until - now));
        }
    }
}

/// How long a wait sleeps before it looks at its call's deadline again.
pub const SLICE: Duration = Duration::from_millis(50);

#[cfg(test)]
mod poll_tests {
    use super::*;

    #[test]
    fn poll_returns_the_first_value_and_gives_up_at_until_or_a_cancel() {
        let mut n = 0;
        let got: Result<Option<u32>, ()> = poll(None, Instant::now() + Duration::from_secs(5), Duration::ZERO, || {
            n += 1;
            Ok((n == 3).then_some(n))
        });
        assert_eq!(got, Ok(Some(3)));
        // Time runs out: `None`, after more than one try.
        let mut tries = 0;
        let started = Instant::now();
        let none: Result<Option<()>, ()> = poll(
            None,
            started + Duration::from_millis(60),
            Duration::from_millis(10),
            || {
                tries += 1;
                Ok(None)
            },
        );
        assert_eq!(none, Ok(None));
        assert!(tries > 1 && started.elapsed() >= Duration::from_millis(60), "{tries}");
        // A cancelled call stops the wait long before `until`.
        let d = Deadline::new();
        d.begin(&Limits::default());
        d.cancel();
        let started = Instant::now();
        let r: Result<Option<()>, ()> = poll(
            Some(&d),
            started + Duration::from_secs(30),
            Duration::from_secs(1),
            || Ok(None),
        );
        assert_eq!(r, Ok(None));
        assert!(started.elapsed() < Duration::from_secs(1));
        // An attempt's error ends it at once.
        assert_eq!(
            poll::<(), _>(None, Instant::now() + Duration::from_secs(5), Duration::ZERO, || Err(
                "no"
            )),
            Err("no")
        );
    }
}
