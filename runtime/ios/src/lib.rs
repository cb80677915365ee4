//! An iPhone, an iPad or a simulator driven through WebDriverAgent (WDA, the XCUITest HTTP server
//! Appium uses).

mod source;

#[cfg(test)]
mod source_tests;

/// How the device reads WDA's page source. Public for the end-to-end tests that hold a fake WDA
/// to it; not part of the API.
#[doc(hidden)]
pub mod wire {
    pub use crate::source::parse_source;
}
