//! The trace viewer inside `report.html` (docs/trace.md): an "Open trace" button per trail that
//! kept a trace, and once per page the viewer's markup, style and script. The viewer loads a trace
//! only when opened (its `trace.js`, by a `<script>` element), so a page of 500 trails costs its
//! readers nothing until one is opened. A page with no trace has none of it.

use std::fmt::Write as _;

use super::{RunReport, TrailReport, xml_escape};

/// Inline in the page's `<style>`: no `<` nor `&` (the page parses as XML too; a test checks).
pub(super) const CSS: &str = include_str!("viewer.css");
/// Inline in a CDATA section: it must not hold `]]>` (a test checks).
const SCRIPT: &str = include_str!("viewer.js");

/// Whether any trail of `report` kept a trace: the page then carries the viewer.
pub(super) fn wanted(report: &RunReport) -> bool {
    report.trails.iter().any(|t| t.trace.is_some())
}

/// The folder of a trail's trace, relative to the run folder (`sign-in` for `sign-in/trace.json`,
/// empty for a session folder's own `trace.json`), and the session's name (its last part).
pub fn trace_dir(trace: &str) -> (&str, &str) {
    let dir = trace.rsplit_once('/').map_or("", |(d, _)| d);
    (dir, dir.rsplit('/').next().unwrap_or(dir))
}

/// The trail's "Open trace" button, and a plain link to its trace.json for a page read without script.
pub(super) fn button(out: &mut String, t: &TrailReport) {
    // A trace named outside the run's folder (absolute, `..`, a URL) is not offered: the page
    // loads nothing from elsewhere.
    let Some(trace) = t
        .trace
        .as_deref()
        .filter(|p| super::traces::inside(std::path::Path::new(""), p).is_some() && !p.contains(':'))
    else {
        return;
    };
    let e = xml_escape;
    let (dir, session) = trace_dir(trace);
    let _ = writeln!(
        out,
        "<p class=\"trace\"><button type=\"button\" class=\"open-trace\" data-dir=\"{}\" data-session=\"{}\">Open trace</button> <a class=\"meta\" href=\"{}\">trace.json</a></p>",
        e(dir),
        e(session),
        e(trace)
    );
}

/// The viewer, hidden until a trace is opened; then its script. Its texts are filled with
/// `textContent` from the trace: nothing of a trace becomes markup.
pub(super) fn section(out: &mut String) {
    out.push_str(concat!(
        "<div id=\"tv\" class=\"tv\" hidden=\"hidden\" role=\"dialog\" aria-label=\"trace viewer\">\n",
        "<header><span id=\"tv-outcome\" class=\"badge\"></span><h2 id=\"tv-title\"></h2>",
        "<span id=\"tv-meta\" class=\"meta\"></span><button type=\"button\" id=\"tv-close\">Close (Esc)</button></header>\n",
        "<div class=\"tv-main\">\n",
        "<nav><input type=\"range\" id=\"tv-scrub\" min=\"0\" max=\"0\" value=\"0\" aria-label=\"scrub the steps\"/>",
        "<ol id=\"tv-items\" tabindex=\"0\" aria-label=\"steps and calls (arrow keys move)\"></ol></nav>\n",
        "<section><div class=\"tv-toggle\"><button type=\"button\" id=\"tv-before\">before</button>",
        "<button type=\"button\" id=\"tv-after\">after</button></div>",
        "<div id=\"tv-noscreen\" class=\"meta\" hidden=\"hidden\">no screen at this moment</div>",
        "<div id=\"tv-shot\" class=\"tv-shot\"><img id=\"tv-img\" alt=\"the screen at this moment\"/>",
        "<div id=\"tv-box\" class=\"tv-box\" hidden=\"hidden\"></div><div id=\"tv-hover\" class=\"tv-hover\" hidden=\"hidden\"></div>",
        "<div id=\"tv-point\" class=\"tv-point\" hidden=\"hidden\"></div></div></section>\n",
        "<section><input type=\"search\" id=\"tv-search\" placeholder=\"search the tree\"/><div id=\"tv-tree\"></div></section>\n",
        "</div>\n<div class=\"tv-bottom\">\n<section id=\"tv-detail\"></section>\n<section>\n<div id=\"tv-tabs\">",
        "<button type=\"button\" data-tab=\"network\">network<span class=\"n\"></span></button>",
        "<button type=\"button\" data-tab=\"console\">console<span class=\"n\"></span></button>",
        "<button type=\"button\" data-tab=\"devicelog\">device log<span class=\"n\"></span></button>",
        "<button type=\"button\" data-tab=\"agent\">agent<span class=\"n\"></span></button>",
        "<button type=\"button\" data-tab=\"video\">video<span class=\"n\"></span></button>",
        "<label><input type=\"checkbox\" id=\"tv-whole\"/> whole trail</label></div>\n",
        "<div id=\"tv-panel\"></div>\n</section>\n</div>\n</div>\n",
    ));
    // CDATA: the script compares with `<` and `&&`; an HTML parser reads the markers as comments.
    let _ = writeln!(out, "<script>//<![CDATA[\n{SCRIPT}//]]></script>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_style_and_script_are_safe_inline() {
        assert!(!CSS.contains('<') && !CSS.contains('&'));
        assert!(!SCRIPT.contains("]]>") && !SCRIPT.to_lowercase().contains("</script"));
        // A positive control: the checks above would see these.
        assert!("a]]>b".contains("]]>") && "x</SCRIPT>".to_lowercase().contains("</script"));
        // Trace data is never parsed as markup.
        assert!(!SCRIPT.contains("innerHTML") && !SCRIPT.contains("insertAdjacentHTML"));
    }

    #[test]
    fn a_trace_folder_and_session_come_from_its_path() {
        assert_eq!(trace_dir("sign-in/trace.json"), ("sign-in", "sign-in"));
        assert_eq!(trace_dir("shard/sign-in/trace.json"), ("shard/sign-in", "sign-in"));
        assert_eq!(trace_dir("trace.json"), ("", ""));
    }
}
