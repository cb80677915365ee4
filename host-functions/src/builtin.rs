//! The built-in host functions, registered by [`HostRegistry::builtin`](crate::HostRegistry::builtin).
//!
//! | name | args | result |
//! | --- | --- | --- |
//! | `lookupCredential` | `{account}` | `{username, password}` |
//! | `env` | `{name}` | `{value: string \| null}` |
//! | `now` | `{}` | `{epochMillis, iso}` |
//! | `readFixture` | `{path}` | `{text}` |

mod credential;
mod env;
mod fixture;
mod now;

pub use credential::{Credential, LookupCredential};
pub use env::{Env, EnvValue};
pub use fixture::{FIXTURE_MAX_BYTES, FixtureText, ReadFixture};
pub use now::{Now, Timestamp};

use crate::HostRegistry;

pub(crate) fn register_all(registry: &mut HostRegistry) {
    registry
        .register::<LookupCredential>()
        .register::<Env>()
        .register::<Now>()
        .register::<ReadFixture>();
}
