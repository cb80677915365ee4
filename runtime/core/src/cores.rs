//! How many cores this process may use, asked once: `available_parallelism` reads the cgroup's
//! files at every call, and a start asked it several times (the scripts' analysis, the parse, the
//! check, the Node runtime's spin).

use std::sync::LazyLock;

/// The cores this process may use (1 when they cannot be known).
pub fn count() -> usize {
    static CORES: LazyLock<usize> = LazyLock::new(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    *CORES
}

/// Whether a second core is there for work beside this thread's.
pub(crate) fn second() -> bool {
    count() > 1
}
