//! W3C pointer actions (`POST /session/{id}/actions`) read as the gestures a finger made: down and
//! up in one place is a tap, held 500 ms or more a long press, moved while down a swipe. Key and
//! wheel sources (Selenium sends key pauses alongside) do nothing here.

use serde_json::Value;

/// How far (points) a finger may drift and still tap.
const SLOP: f64 = 10.0;
const LONG_PRESS_MS: f64 = 500.0;

#[derive(Debug, Clone, PartialEq)]
pub enum Gesture {
    Tap(f64, f64),
    LongPress(f64, f64),
    Swipe {
        from: (f64, f64),
        to: (f64, f64),
        millis: u64,
    },
}

/// The gestures in `body`, source after source; `center` gives an element's centre for a move
/// whose origin is an element. An error names what is malformed (WDA answers `invalid argument`).
pub fn gestures(body: &Value, center: &dyn Fn(&str) -> Option<(f64, f64)>) -> Result<Vec<Gesture>, String> {
    let sources = body
        .get("actions")
        .and_then(Value::as_array)
        .ok_or("'actions' must be an array of input sources")?;
    let mut out = Vec::new();
    for source in sources {
        if source.get("type").and_then(Value::as_str) != Some("pointer") {
            continue;
        }
        let steps = source
            .get("actions")
            .and_then(Value::as_array)
            .ok_or("a pointer source needs an 'actions' array")?;
        pointer(steps, center, &mut out)?;
    }
    Ok(out)
}

/// Where the finger went down, how long it has been down, and whether it moved away.
struct Down {
    at: (f64, f64),
    held_ms: f64,
    moved: bool,
}

fn pointer(steps: &[Value], center: &dyn Fn(&str) -> Option<(f64, f64)>, out: &mut Vec<Gesture>) -> Result<(), String> {
    let mut pos = (0.0, 0.0);
    let mut down: Option<Down> = None;
    for step in steps {
        let ms = step.get("duration").and_then(Value::as_f64).unwrap_or(0.0);
        match step.get("type").and_then(Value::as_str) {
            Some("pointerMove") => {
                let num = |k: &str| step.get(k).map_or(Some(0.0), Value::as_f64);
                let (Some(x), Some(y)) = (num("x"), num("y")) else {
                    return Err(format!("pointerMove needs numeric x and y: {step}"));
                };
                let base = match step.get("origin") {
                    None | Some(Value::Null) => (0.0, 0.0),
                    Some(Value::String(s)) if s == "viewport" => (0.0, 0.0),
                    Some(Value::String(s)) if s == "pointer" => pos,
                    Some(Value::Object(o)) => {
                        let id = o.values().find_map(Value::as_str).unwrap_or("");
                        center(id).ok_or_else(|| format!("the origin element {id} is not on the screen"))?
                    }
                    Some(other) => return Err(format!("unknown pointerMove origin {other}")),
                };
                pos = (base.0 + x, base.1 + y);
                if let Some(d) = &mut down {
                    d.held_ms += ms;
                    d.moved |= (pos.0 - d.at.0).hypot(pos.1 - d.at.1) > SLOP;
                }
            }
            Some("pointerDown") => {
                down = Some(Down {
                    at: pos,
                    held_ms: 0.0,
                    moved: false,
                })
            }
            Some("pause") => {
                if let Some(d) = &mut down {
                    d.held_ms += ms;
                }
            }
            Some("pointerUp") => {
                let Some(d) = down.take() else { continue };
                out.push(if d.moved {
                    Gesture::Swipe {
                        from: d.at,
                        to: pos,
                        millis: d.held_ms as u64,
                    }
                } else if d.held_ms >= LONG_PRESS_MS {
                    Gesture::LongPress(d.at.0, d.at.1)
                } else {
                    Gesture::Tap(d.at.0, d.at.1)
                });
            }
            Some("pointerCancel") => down = None,
            other => return Err(format!("unknown pointer action type {other:?}")),
        }
    }
    Ok(())
}
