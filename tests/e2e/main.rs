//! End-to-end tests: sessions on the simulated device, hostile scripts, the CLI.

mod adb;
mod agent;
mod cli;
mod cli_first_hour;
mod cli_run;
mod device_errors;
mod docs;
mod fuzz;
mod host;
mod hostile;
mod limits;
mod llm_tools;
mod mcp;
mod original_layout;
mod original_tools;
mod registration;
mod report;
mod report_browser;
mod runtimes;
mod scripts_debug;
mod sdk_outside;
mod secret_property;
mod shell;
mod spine;
mod surface;
mod trails;
