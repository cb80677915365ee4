//! The calls' arguments, moved out of the parsed document into the calls once the walk has read them.

use serde_json::{Map, Value};

use super::ToolCall;

/// Moves each call's arguments out of the document's value into the call: the walk only read them,
/// and copying them was a tenth of a check. A call whose `args` is a number `i` gets the value at
/// `args_at[i]`.
pub(super) fn move_args<'c>(value: &mut Value, args_at: Vec<usize>, calls: impl Iterator<Item = &'c mut ToolCall>) {
    if args_at.is_empty() {
        return;
    }
    let mut by_addr: Vec<(usize, usize)> = args_at.iter().enumerate().map(|(i, a)| (*a, i)).collect();
    by_addr.sort_unstable();
    let mut found: Vec<Option<Value>> = (0..args_at.len()).map(|_| None).collect();
    collect_args(value, &by_addr, &mut found);
    for call in calls {
        let Some(i) = call.args.as_u64().and_then(|i| usize::try_from(i).ok()) else {
            continue;
        };
        // Every address was taken from this same, unchanged value, so each is found; the empty map
        // is only what a call would otherwise hold.
        call.args = found
            .get_mut(i)
            .and_then(Option::take)
            .unwrap_or_else(|| Value::Object(Map::new()));
    }
}

/// Takes the values at the addresses of `by_addr` (sorted) out of `v`, into `found`.
fn collect_args(v: &mut Value, by_addr: &[(usize, usize)], found: &mut [Option<Value>]) {
    let addr = std::ptr::from_ref::<Value>(v) as usize;
    if let Ok(at) = by_addr.binary_search_by_key(&addr, |(a, _)| *a) {
        if let Some(slot) = found.get_mut(by_addr[at].1) {
            *slot = Some(std::mem::take(v));
        }
        return;
    }
    match v {
        Value::Object(m) => m.values_mut().for_each(|c| collect_args(c, by_addr, found)),
        Value::Array(items) => items.iter_mut().for_each(|c| collect_args(c, by_addr, found)),
        _ => {}
    }
}
