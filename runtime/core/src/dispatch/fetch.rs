//! `ctx.fetch`: the network through the host ([`crate::network`]). Like a host call it takes one
//! place on the depth stack, writes no step and keeps the cached snapshot; each exchange (or refusal)
//! leaves one `fetch` line in the session log and one tracing line: method, origin, status, time.

use std::time::Instant;

use serde_json::Value;

use super::CallError;
use crate::network::{self, FetchError, Origin};
use crate::state::SessionCore;
use crate::state::log::Event;

/// Runs one `ctx.fetch` for the session's running call: the response as JSON, or the message the
/// script's error carries (`fetch: ...`).
pub fn fetch(s: &SessionCore, args: Value) -> Result<Value, String> {
    let _guard = s
        .enter_call("fetch")
        .map_err(|(cap, name)| CallError::Depth { cap, name }.to_string())?;
    let fail = |e: FetchError| format!("fetch: {e}");
    let request = network::decode_request(&args).map_err(fail)?;
    let Some(remaining) = s.deadline.remaining() else {
        return Err("fetch: no tool call is under way".into());
    };
    // What the log names: a method it knows, the origin as the allowlist reads it.
    let method = request.method.as_deref().unwrap_or("GET").to_ascii_uppercase();
    let origin = Origin::of_url(&request.url).map(|o| o.to_string()).ok();
    let started = Instant::now();
    let result = network::prepare(&s.catalog.network, request, s.secrets(), remaining).and_then(|prepared| {
        match &s.catalog.fetch {
            Some(client) => client.exchange(prepared, &s.deadline),
            None => Err(FetchError::NotBuilt),
        }
    });
    let millis = started.elapsed().as_secs_f64() * 1000.0;
    let status = result.as_ref().ok().map(|r| r.status);
    let error = result.as_ref().err().map(|e| e.to_string());
    let logged_method = if network::is_method(&method) {
        method.as_str()
    } else {
        "?"
    };
    let logged_origin = origin.as_deref().unwrap_or("?");
    tracing::debug!(
        method = logged_method,
        origin = logged_origin,
        status,
        ms = millis,
        "fetch"
    );
    s.log.borrow_mut().append(Event::Fetch {
        method: logged_method,
        origin: logged_origin,
        status,
        error: error.as_deref(),
        millis,
    });
    let mut response = result.map_err(fail)?;
    // What the server sends back is held to the rule every reply keeps: no secret value reaches the
    // script (a server that echoes the header it was sent shows `***`).
    if !s.redact.is_empty() {
        response.body = s.redact.text(&response.body).into_owned();
        for (_, v) in &mut response.headers {
            *v = s.redact.text(v).into_owned();
        }
    }
    serde_json::to_value(&response).map_err(|e| format!("fetch: the response could not be encoded: {e}"))
}
