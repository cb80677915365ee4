//! Host calls straight on QuickJS values (feature `quickjs`): arguments decode from the script's
//! object and the result is built as a script object, with no `serde_json::Value` in between. The
//! errors are those of the JSON path: a path and an expected type, never a value.

pub mod de;
pub mod object;
pub mod ser;

use serde::de::DeserializeOwned;

use crate::decode::{DecodeError, Failed, RawError, located};
use de::{Budget, JsDe};

/// Decodes a script's value into `T` strictly, as [`crate::decode::decode`] does JSON. The first
/// pass runs without path tracking or messages; only a failure pays for the second that says
/// what and where.
pub(crate) fn decode_js<'js, T: DeserializeOwned>(value: &rquickjs::Value<'js>) -> Result<T, DecodeError> {
    let budget = Budget::default();
    if let Ok(v) = T::deserialize(JsDe::<Failed>::new(value, &budget)) {
        return Ok(v);
    }
    let budget = Budget::default();
    serde_path_to_error::deserialize(JsDe::<RawError>::new(value, &budget)).map_err(located)
}

#[cfg(test)]
mod tests;
