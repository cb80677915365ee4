//! `now {}`: the host's clock, as epoch milliseconds and RFC 3339 UTC.

use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{HostContext, HostError, HostFunction};

/// The current time on the host, in UTC.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Now {}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub epoch_millis: i64,
    /// The same instant as RFC 3339 in UTC with milliseconds, e.g. `2024-02-29T12:34:56.789Z`.
    pub iso: String,
}

impl HostFunction for Now {
    const NAME: &'static str = "now";
    type Output = Timestamp;

    fn call(self, _cx: &mut dyn HostContext) -> Result<Timestamp, HostError> {
        let epoch_millis = match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |ms| -ms),
        };
        Ok(Timestamp {
            epoch_millis,
            iso: rfc3339_millis(epoch_millis),
        })
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the epoch (proleptic Gregorian, UTC).
pub(crate) fn rfc3339_millis(epoch_millis: i64) -> String {
    let days = epoch_millis.div_euclid(86_400_000);
    let ms_of_day = epoch_millis.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (secs, ms) = (ms_of_day / 1000, ms_of_day % 1000);
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day). It saves a
/// date crate for one formatting job.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // year of era, [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st, [0, 365]
    let mp = (5 * doy + 2) / 153; // month from March, [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        // Expected values from `date -u -d @<seconds> +%Y-%m-%dT%H:%M:%S.%3NZ`.
        for (millis, want) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_709_210_096_789, "2024-02-29T12:34:56.789Z"),
            (4_102_444_800_000, "2100-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        ] {
            assert_eq!(rfc3339_millis(millis), want, "{millis}");
        }
    }
}
