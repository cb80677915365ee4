//! `lookupCredential {account}`: a username and password from the secret store.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::secrets::{SecretStore, normalize_name};
use crate::{HostContext, HostError, HostFunction};

/// The username and password of a test account, read from the secrets `<ACCOUNT>_USERNAME` and
/// `<ACCOUNT>_PASSWORD` (set as `TRAILBLAZE_SECRET_<ACCOUNT>_USERNAME`, ... or in the secrets file).
/// The account name is normalized to upper snake case: `demo` reads `DEMO_USERNAME`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupCredential {
    /// The account's name, e.g. `demo`.
    pub account: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Credential {
    pub username: String,
    pub password: String,
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credential")
            .field("username", &"<redacted>")
            .field("password", &"<redacted>")
            .finish()
    }
}

impl HostFunction for LookupCredential {
    const NAME: &'static str = "lookupCredential";
    type Output = Credential;

    fn call(self, cx: &mut dyn HostContext) -> Result<Credential, HostError> {
        let secrets = &cx.env().secrets;
        let account = normalize_name(&self.account);
        let (user_key, pass_key) = (format!("{account}_USERNAME"), format!("{account}_PASSWORD"));
        let names = secrets.names();
        let has = |key: &String| names.binary_search(key).is_ok();
        // Decide from names alone first, so an unknown account reads no value at all.
        if account.is_empty() || !has(&user_key) || !has(&pass_key) {
            return Err(HostError(unknown_account(&account, &user_key, &pass_key, secrets)));
        }
        match (secrets.get(&user_key), secrets.get(&pass_key)) {
            (Some(username), Some(password)) => Ok(Credential {
                username: username.to_string(),
                password: password.to_string(),
            }),
            _ => Err(HostError(unknown_account(&account, &user_key, &pass_key, secrets))),
        }
    }
}

/// Accounts that have both a username and a password.
pub(crate) fn accounts(secrets: &SecretStore) -> Vec<String> {
    let names = secrets.names();
    names
        .iter()
        .filter_map(|n| n.strip_suffix("_USERNAME"))
        .filter(|account| !account.is_empty() && names.binary_search(&format!("{account}_PASSWORD")).is_ok())
        .map(str::to_string)
        .collect()
}

fn unknown_account(account: &str, user_key: &str, pass_key: &str, secrets: &SecretStore) -> String {
    let available = accounts(secrets);
    let mut msg = if account.is_empty() {
        "lookupCredential: `account` is empty".to_string()
    } else {
        format!("no credentials for account `{account}`: secrets `{user_key}` and `{pass_key}` must both be set")
    };
    if available.is_empty() {
        msg.push_str("; no accounts are configured (set TRAILBLAZE_SECRET_<ACCOUNT>_USERNAME and _PASSWORD)");
    } else {
        msg.push_str(&crate::decode::did_you_mean(
            crate::decode::nearest(account, &available).as_slice(),
        ));
        msg.push_str(&format!(" (available accounts: {})", available.join(", ")));
    }
    msg
}
