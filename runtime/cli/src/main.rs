//! The `trailblaze` command line: a thin layer over the library. Exit codes: 0 success, 1 a failed
//! tool or trail or findings, 2 a usage or input error.

mod cli;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(cli::main())
}
