//! The session's step records, flat and in order with their depth, as the tree of calls they were: a
//! scripted or composed tool's steps under the call that made them.

use super::CallReport;
use crate::state::log::LogEntry;

/// The calls `records` hold, nested by depth: a record is the child of the nearest earlier record of a
/// smaller depth. Records of the smallest depths are the roots. A record still running (no outcome)
/// counts as not ok.
pub fn nest_calls(records: &[LogEntry]) -> Vec<CallReport> {
    let mut roots: Vec<CallReport> = Vec::new();
    // The open path from a root to the latest record, with each one's depth.
    let mut open: Vec<(u32, CallReport)> = Vec::new();
    for r in records {
        close_until(&mut open, &mut roots, r.depth);
        open.push((r.depth, call_of(r)));
    }
    close_until(&mut open, &mut roots, 0);
    roots
}

/// Closes every open record at `depth` or deeper into its parent (or the roots).
fn close_until(open: &mut Vec<(u32, CallReport)>, roots: &mut Vec<CallReport>, depth: u32) {
    while open.last().is_some_and(|(d, _)| *d >= depth) {
        let Some((_, done)) = open.pop() else { break };
        match open.last_mut() {
            Some((_, parent)) => parent.calls.push(done),
            None => roots.push(done),
        }
    }
}

fn call_of(r: &LogEntry) -> CallReport {
    CallReport {
        tool: r.tool.clone(),
        args: r.args.clone(),
        ok: r.ok == Some(true),
        error: r.error.clone(),
        duration_ms: r.millis,
        line: None,
        tap: None,
        calls: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rec(seq: u64, depth: u32, tool: &str) -> LogEntry {
        LogEntry {
            seq,
            depth,
            tool: tool.into(),
            args: json!({}),
            ok: Some(true),
            masked: false,
            error: None,
            millis: 1.0,
        }
    }

    /// `tool(child, child(grandchild))` as text, to compare shapes.
    fn shape(calls: &[CallReport]) -> String {
        calls
            .iter()
            .map(|c| {
                if c.calls.is_empty() {
                    c.tool.clone()
                } else {
                    format!("{}({})", c.tool, shape(&c.calls))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn records_nest_under_the_call_that_made_them() {
        let records = [
            rec(1, 0, "openMessage"),
            rec(2, 1, "tap"),
            rec(3, 1, "composed"),
            rec(4, 2, "inputText"),
            rec(5, 2, "pressKey"),
            rec(6, 1, "assert"),
            rec(7, 0, "next"),
        ];
        assert_eq!(
            shape(&nest_calls(&records)),
            "openMessage(tap, composed(inputText, pressKey), assert), next"
        );
        // Control: flat records stay flat, in order.
        let flat = [rec(1, 0, "a"), rec(2, 0, "b"), rec(3, 0, "c")];
        assert_eq!(shape(&nest_calls(&flat)), "a, b, c");
        // A depth that jumps (a delegating tool is no step itself) still nests under the last call.
        let jump = [rec(1, 0, "a"), rec(2, 2, "b"), rec(3, 1, "c")];
        assert_eq!(shape(&nest_calls(&jump)), "a(b, c)");
        assert!(nest_calls(&[]).is_empty());
        let mut running = rec(1, 0, "slow");
        running.ok = None;
        assert!(!nest_calls(&[running])[0].ok, "a call with no outcome is not ok");
    }
}
