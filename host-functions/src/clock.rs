//! The clock host calls are timed by. A small `ctx.host` call takes well under a microsecond, and
//! two readings of `Instant` (the vDSO's `clock_gettime`, ~25 ns each here) were ~6 % of it. Where
//! the CPU has an invariant time-stamp counter (x86-64 that says so), a reading is that counter,
//! a few nanoseconds; elsewhere it is `Instant`. Ticks become time only when they are shown (a
//! log's tally, a tracing field), at the rate measured between this process's first reading and
//! that moment, so no calibration delays start-up.

use std::ops::AddAssign;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A span of time in the clock's own ticks; [`Ticks::to_duration`] says how long it was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticks(u64);

/// One reading of the clock.
#[derive(Debug, Clone, Copy)]
pub struct Stamp(u64);

struct Origin {
    at: Instant,
    ticks: u64,
    counter: bool,
}

static ORIGIN: OnceLock<Origin> = OnceLock::new();

fn origin() -> &'static Origin {
    ORIGIN.get_or_init(|| {
        let counter = invariant_counter();
        Origin {
            at: Instant::now(),
            ticks: if counter { counter_now() } else { 0 },
            counter,
        }
    })
}

/// Reads the clock.
#[inline]
pub fn now() -> Stamp {
    let o = origin();
    Stamp(if o.counter { counter_now() } else { nanos_since(o.at) })
}

impl Stamp {
    /// The ticks from this reading to now (zero if the counter went back, as a core's may).
    #[inline]
    pub fn elapsed(self) -> Ticks {
        Ticks(now().0.saturating_sub(self.0))
    }
}

impl Ticks {
    /// How long this was, at the rate the clock ran since the process first read it.
    pub fn to_duration(self) -> Duration {
        rate().duration(self)
    }
}

/// The clock's rate, read once: nanoseconds and ticks since the process's first reading (a writer
/// of many tallies reads the clocks once, not once per tally).
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    nanos: u64,
    /// `None`: the clock counts nanoseconds itself (no invariant counter).
    ticks: Option<u64>,
}

/// The rate the clock has run at so far.
pub fn rate() -> Rate {
    let o = origin();
    Rate {
        nanos: nanos_since(o.at),
        ticks: o.counter.then(|| counter_now().saturating_sub(o.ticks)),
    }
}

impl Rate {
    /// How long `t` was at this rate.
    pub fn duration(self, t: Ticks) -> Duration {
        match self.ticks {
            None => Duration::from_nanos(t.0),
            Some(0) => Duration::ZERO,
            Some(ticks) => {
                let scaled = u128::from(t.0) * u128::from(self.nanos) / u128::from(ticks);
                Duration::from_nanos(u64::try_from(scaled).unwrap_or(u64::MAX))
            }
        }
    }
}

impl AddAssign for Ticks {
    fn add_assign(&mut self, other: Ticks) {
        self.0 = self.0.saturating_add(other.0);
    }
}

fn nanos_since(at: Instant) -> u64 {
    u64::try_from(at.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Whether the CPU's counter runs at one rate whatever the core's frequency and power state
/// (CPUID leaf 0x8000_0007, EDX bit 8): only then are its ticks time.
#[cfg(target_arch = "x86_64")]
fn invariant_counter() -> bool {
    use std::arch::x86_64::__cpuid;
    // SAFETY: every x86-64 CPU has CPUID; it only reads identification registers.
    #[allow(unused_unsafe)]
    let (max, leaf) = unsafe { (__cpuid(0x8000_0000).eax, __cpuid(0x8000_0007).edx) };
    max >= 0x8000_0007 && leaf & (1 << 8) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_counter() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn counter_now() -> u64 {
    // SAFETY: RDTSC reads a register; every x86-64 CPU has it.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn counter_now() -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A known wait measures as about that long (the counter's rate is read from `Instant`), and
    /// no wait as about none: the clock is time, whichever source this machine has.
    #[test]
    fn ticks_measure_time() {
        let _ = now();
        let start = now();
        let wall = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let took = start.elapsed();
        let wall = wall.elapsed();
        let measured = took.to_duration();
        let ratio = measured.as_secs_f64() / wall.as_secs_f64();
        assert!((0.9..1.1).contains(&ratio), "{measured:?} against {wall:?}");
        // Control: back-to-back readings are far shorter than the wait.
        let start = now();
        let none = start.elapsed().to_duration();
        assert!(none < Duration::from_millis(1), "{none:?}");
        // Sums add up.
        let mut sum = Ticks::default();
        sum += took;
        sum += took;
        let twice = sum.to_duration().as_secs_f64() / measured.as_secs_f64();
        assert!((1.9..2.1).contains(&twice), "{twice}");
    }
}
