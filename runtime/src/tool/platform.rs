//! The original's tools for devices this host does not drive (`web_*` for a browser, `compose_*`
//! for a desktop app): known by name, so a call is a platform error and a trail that records one
//! is skipped by the type gate with a note, never "unknown tool".
