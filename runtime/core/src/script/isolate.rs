//! What `transpile` and `analyze` share to keep swc from taking the process down: each runs
//! swc on a thread of its own (so the depth swc can reach does not depend on the caller's
//! stack), and turns a panic there into an error here.

use std::{
    any::Any,
    panic::{AssertUnwindSafe, catch_unwind},
};

/// Runs `job`; a panic becomes `Err` with its message. Unwind safety is asserted because the
/// callers drop all of swc's state after a panic.
pub(super) fn catch_panic<T>(job: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(job)).map_err(|payload| panic_message(&*payload))
}

/// The message a panic was raised with (`panic!` payloads are `&str` or `String`).
pub(super) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic with a non-string payload".to_owned())
}
