//! The `trailblaze` command line: a thin layer over the library. Exit codes: 0 success, 1 a failed
//! tool or trail or findings, 2 a usage or input error.

mod cli;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let code = cli::main();
    // The command is done and has dropped what it opened (sessions, devices, browsers). Returning
    // would run the allocator's exit hook, which hands every page back to the kernel one `madvise`
    // at a time (~2 ms after a long `run`) just before the kernel takes the whole process back
    // anyway; so the output is flushed and the process ends here.
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` has no preconditions; no atexit work is owed (nothing registers any but the
    // allocator, and the output is flushed above).
    unsafe { libc::_exit(i32::from(code)) }
}
