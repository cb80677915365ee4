//! End-to-end tests: sessions on the simulated device, hostile scripts, the CLI.

/// Every process the tests start (the CLI, a shell running the docs' commands, an MCP client that
/// starts the CLI) and every project they open in-process caches in the build's own folder, never
/// in the user's `~/.cache`: set before `main`, while this process has one thread (setting the
/// environment later would race the test threads). A test that needs a cache of its own still
/// gives `TRAILBLAZE_CACHE_DIR` to its command.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static PRIVATE_CACHE: extern "C" fn() = private_cache;

#[cfg(target_os = "linux")]
extern "C" fn private_cache() {
    // SAFETY: runs from .init_array, before main and before any other thread exists.
    unsafe { std::env::set_var("TRAILBLAZE_CACHE_DIR", private_cache::DIR) };
}

mod adb;
mod adb_captures;
mod adb_tools;
mod adb_trace;
mod agent;
mod agent_cli;
mod cli;
mod cli_first_hour;
mod cli_run;
mod colour;
mod commands;
mod device_errors;
mod docs;
mod docs_commands;
mod doctor;
mod expand_once;
mod fake_wda;
mod fetch;
mod fuzz;
mod host;
mod hostile;
mod hostile_device;
mod init;
mod ios;
mod jobs;
mod judge;
mod last_builtins;
mod limits;
mod llm_tools;
mod lost_update;
mod machine_output;
mod mcp;
mod mcp_toolsets;
mod mobile_tools;
mod naming;
mod navigation;
mod neighbours;
mod newcomer;
mod original_catalog;
mod original_layout;
mod original_tools;
mod png_image;
mod private_cache;
mod prompt_only;
mod recorded_secrets;
mod registration;
mod replay_paths;
mod report;
mod report_browser;
mod report_cmd;
mod report_dir;
mod runtimes;
mod schemas;
mod scripts_debug;
mod scroll;
mod sdk_outside;
mod secret_pictures;
mod secret_property;
mod session_devices;
mod sessions;
mod shell;
mod skill;
mod snapshot_flags;
mod spine;
mod storyboard;
mod surface;
mod trace;
mod trace_viewer;
mod trails;
mod vision;
mod warm_sessions;
mod watch;
mod web;
mod web_trace;
