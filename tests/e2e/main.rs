//! End-to-end tests: sessions on the simulated device, hostile scripts, the CLI.

mod cli;
mod cli_first_hour;
mod device_errors;
mod fuzz;
mod host;
mod hostile;
mod limits;
mod llm_tools;
mod registration;
mod runtimes;
mod secret_property;
mod spine;
mod surface;
mod trails;
