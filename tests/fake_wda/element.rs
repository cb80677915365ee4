//! The XCUITest element tree an app shows, and the page source as WebDriverAgent writes it
//! (FBXPath.m, XCUIElement+FBWebDriverAttributes.m): libxml2's indented output, per element the
//! attributes `type value name label enabled visible accessible x y width height index`, then
//! `placeholderValue` (text inputs only) and `traits`, then `processId` and `bundleId` on the
//! application. `value`, `name` and `label` are left out when nil. WDA writes neither `selected` nor
//! `focused` on iOS (`focused` is tvOS only), so neither does the fake: focus is read with
//! `GET /element/{id}/attribute/focused`. `hittable`, `nativeFrame` and the like are opt-in
//! settings in WDA, left out here.

/// A frame in points. XCUITest frames are whole numbers once WDA rounds them (`CGRectIntegral`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, width: i32, height: i32) -> Rect {
        Rect { x, y, width, height }
    }

    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= f64::from(self.x)
            && y >= f64::from(self.y)
            && x < f64::from(self.x + self.width)
            && y < f64::from(self.y + self.height)
    }

    pub fn center(&self) -> (f64, f64) {
        (
            f64::from(self.x) + f64::from(self.width) / 2.0,
            f64::from(self.y) + f64::from(self.height) / 2.0,
        )
    }

    /// The part of this frame inside `o`, if any.
    pub fn clip(&self, o: &Rect) -> Option<Rect> {
        let (x, y) = (self.x.max(o.x), self.y.max(o.y));
        let right = (self.x + self.width).min(o.x + o.width);
        let bottom = (self.y + self.height).min(o.y + o.height);
        (x < right && y < bottom).then(|| Rect::new(x, y, right - x, bottom - y))
    }

    pub fn intersects(&self, o: &Rect) -> bool {
        self.width > 0
            && self.height > 0
            && self.x < o.x + o.width
            && o.x < self.x + self.width
            && self.y < o.y + o.height
            && o.y < self.y + self.height
    }
}

/// One element as XCUITest snapshots it: raw properties; the WebDriver attributes derive from them
/// by WDA's rules (`wd_*`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Element {
    /// `XCUIElementTypeButton`, ...
    pub kind: String,
    pub identifier: Option<String>,
    pub label: Option<String>,
    pub value: Option<String>,
    pub placeholder: Option<String>,
    pub rect: Rect,
    pub enabled: bool,
    pub selected: bool,
    /// Has keyboard focus (XCUITest's `hasKeyboardFocus`).
    pub focused: bool,
    /// A header (a large title): the `Header` trait.
    pub header: bool,
    pub children: Vec<Element>,
}

impl Element {
    /// An element of `kind` (`Button` or `XCUIElementTypeButton`) at `rect`, enabled.
    pub fn new(kind: &str, rect: Rect) -> Element {
        let kind = if kind.starts_with("XCUIElementType") {
            kind.to_owned()
        } else {
            format!("XCUIElementType{kind}")
        };
        Element {
            kind,
            rect,
            enabled: true,
            ..Element::default()
        }
    }

    pub fn id(mut self, id: &str) -> Element {
        self.identifier = Some(id.to_owned());
        self
    }

    pub fn label(mut self, label: &str) -> Element {
        self.label = Some(label.to_owned());
        self
    }

    pub fn value(mut self, value: &str) -> Element {
        self.value = Some(value.to_owned());
        self
    }

    pub fn placeholder(mut self, p: &str) -> Element {
        self.placeholder = Some(p.to_owned());
        self
    }

    pub fn enabled(mut self, enabled: bool) -> Element {
        self.enabled = enabled;
        self
    }

    pub fn focused(mut self, focused: bool) -> Element {
        self.focused = focused;
        self
    }

    pub fn header(mut self) -> Element {
        self.header = true;
        self
    }

    pub fn child(mut self, c: Element) -> Element {
        self.children.push(c);
        self
    }

    pub fn children(mut self, cs: impl IntoIterator<Item = Element>) -> Element {
        self.children.extend(cs);
        self
    }

    /// The type without its `XCUIElementType` prefix.
    pub fn short_kind(&self) -> &str {
        self.kind.strip_prefix("XCUIElementType").unwrap_or(&self.kind)
    }

    fn takes_text(&self) -> bool {
        matches!(
            self.short_kind(),
            "TextField" | "SecureTextField" | "SearchField" | "TextView"
        )
    }

    /// WDA's `wdValue`: a static text's label, a selected button's `1`, a switch's `0`/`1`, an
    /// empty text input's placeholder; nil when empty.
    pub fn wd_value(&self) -> Option<String> {
        let value = self.value.clone().filter(|v| !v.is_empty());
        let v = match self.short_kind() {
            "StaticText" => value.or_else(|| self.label.clone()),
            "Button" => value.or_else(|| self.selected.then(|| "1".to_owned())),
            "Switch" => Some(if value.as_deref() == Some("1") { "1" } else { "0" }.to_owned()),
            _ if self.takes_text() => value.or_else(|| self.placeholder.clone()),
            _ => value,
        };
        v.filter(|v| !v.is_empty())
    }

    /// WDA's `wdName`: the accessibility identifier, else the label.
    pub fn wd_name(&self) -> Option<String> {
        let non_empty = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
        non_empty(&self.identifier).or_else(|| non_empty(&self.label))
    }

    /// WDA's `wdLabel`: a text field's label even when empty, anything else's only when not.
    pub fn wd_label(&self) -> Option<String> {
        match self.short_kind() {
            "TextField" | "SecureTextField" => Some(self.label.clone().unwrap_or_default()),
            _ => self.label.clone().filter(|l| !l.is_empty()),
        }
    }

    /// What `GET /element/{id}/text` answers: the value, else the label.
    pub fn wd_text(&self) -> String {
        self.wd_value().or_else(|| self.wd_label()).unwrap_or_default()
    }

    /// The UIAccessibilityTraits WDA names (FBAccessibilityTraits.m), comma separated.
    fn traits(&self) -> String {
        let mut t: Vec<&str> = match self.short_kind() {
            "Button" | "Cell" => vec!["Button"],
            "StaticText" => vec!["StaticText"],
            "SearchField" => vec!["SearchField"],
            "Image" | "Icon" => vec!["Image"],
            "Key" => vec!["KeyboardKey"],
            "Link" => vec!["Link"],
            _ => vec![],
        };
        if self.header {
            t.push("Header");
        }
        if self.selected {
            t.push("Selected");
        }
        if !self.enabled {
            t.push("NotEnabled");
        }
        t.join(", ")
    }

    /// Whether XCUITest makes it an accessibility element (containers are not).
    fn ax_element(&self) -> bool {
        matches!(
            self.short_kind(),
            "Button"
                | "StaticText"
                | "Cell"
                | "TextField"
                | "SecureTextField"
                | "SearchField"
                | "TextView"
                | "Switch"
                | "Key"
                | "Icon"
                | "Image"
                | "Link"
        )
    }

    /// The element at `path` (child indexes from this one).
    pub fn at(&self, path: &[usize]) -> Option<&Element> {
        path.iter().try_fold(self, |e, &i| e.children.get(i))
    }

    /// Every descendant (not this element) in document order, with its path.
    pub fn descendants(&self) -> Vec<(Vec<usize>, &Element)> {
        fn walk<'a>(e: &'a Element, path: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, &'a Element)>) {
            for (i, c) in e.children.iter().enumerate() {
                path.push(i);
                out.push((path.clone(), c));
                walk(c, path, out);
                path.pop();
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }

    /// The deepest element under (x, y) whose type is `kind` (short form), later siblings on top.
    pub fn hit(&self, x: f64, y: f64, kind: &str) -> Option<&Element> {
        let inner = self.children.iter().rev().find_map(|c| c.hit(x, y, kind));
        inner.or_else(|| (self.short_kind() == kind && self.rect.contains(x, y)).then_some(self))
    }
}

/// The application element's extras: its bundle id and process id.
pub struct AppInfo<'a> {
    pub bundle_id: &'a str,
    pub pid: u32,
}

/// The page source: the XML declaration, `<scope>` around the tree when asked (Appium asks for
/// `AppiumAUT`), libxml2's two-space indentation, attributes in `excluded` left out.
pub fn source(root: &Element, app: &AppInfo, screen: Rect, scope: Option<&str>, excluded: &[&str]) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let depth = match scope {
        Some(s) => {
            out.push_str(&format!("<{}>\n", xml_safe(s)));
            1
        }
        None => 0,
    };
    let mut w = Writer {
        out,
        screen,
        excluded,
        app,
    };
    w.element(root, 0, depth, false);
    if let Some(s) = scope {
        w.out.push_str(&format!("</{}>\n", xml_safe(s)));
    }
    w.out
}

struct Writer<'a> {
    out: String,
    screen: Rect,
    excluded: &'a [&'a str],
    app: &'a AppInfo<'a>,
}

impl Writer<'_> {
    fn element(&mut self, e: &Element, index: usize, depth: usize, in_ax: bool) {
        let pad = "  ".repeat(depth);
        self.out.push_str(&format!("{pad}<{}", e.kind));
        let accessible = e.ax_element() && !in_ax;
        let visible = e.rect.intersects(&self.screen);
        let r = e.rect;
        let attrs: [(&str, Option<String>); 12] = [
            ("type", Some(e.kind.clone())),
            ("value", e.wd_value()),
            ("name", e.wd_name()),
            ("label", e.wd_label()),
            ("enabled", Some(e.enabled.to_string())),
            ("visible", Some(visible.to_string())),
            ("accessible", Some(accessible.to_string())),
            ("x", Some(r.x.to_string())),
            ("y", Some(r.y.to_string())),
            ("width", Some(r.width.to_string())),
            ("height", Some(r.height.to_string())),
            ("index", Some(index.to_string())),
        ];
        for (name, value) in attrs {
            self.attr(name, value.as_deref());
        }
        if e.takes_text() {
            self.attr("placeholderValue", e.placeholder.as_deref());
        }
        self.attr("traits", Some(&e.traits()));
        if e.short_kind() == "Application" {
            self.attr("processId", Some(&self.app.pid.to_string()));
            self.attr("bundleId", Some(self.app.bundle_id));
        }
        if e.children.is_empty() {
            self.out.push_str("/>\n");
            return;
        }
        self.out.push_str(">\n");
        // A table is never taken as an accessible container (WDA's special case).
        let in_ax = in_ax || (e.ax_element() && e.short_kind() != "Table");
        for (i, c) in e.children.iter().enumerate() {
            self.element(c, i, depth + 1, in_ax);
        }
        self.out.push_str(&format!("{pad}</{}>\n", e.kind));
    }

    fn attr(&mut self, name: &str, value: Option<&str>) {
        let Some(value) = value else { return };
        if self.excluded.iter().any(|x| x.eq_ignore_ascii_case(name)) {
            return;
        }
        self.out.push_str(&format!(" {name}=\"{}\"", escape(&xml_safe(value))));
    }
}

/// Drops what XML 1.0 cannot hold (control characters, U+FFFE/U+FFFF), as WDA's
/// `fb_xmlSafeStringWithReplacement:@""` does.
fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|&c| matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{fffe}' && c != '\u{ffff}'))
        .collect()
}

/// libxml2's attribute escaping.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

/// The software keyboard, `height` points tall at the bottom of a `width` × `screen_height`
/// screen: a top row of letter keys, then space, delete and return (WDA waits for a key with a
/// label before it types).
pub fn keyboard(width: i32, screen_height: i32, height: i32) -> Element {
    let top = screen_height - height;
    let letters = "qwertyuiop";
    let key_w = width / letters.len() as i32;
    let keys = letters.chars().enumerate().map(|(i, c)| {
        Element::new("Key", Rect::new(i as i32 * key_w, top + 8, key_w, 42))
            .label(&c.to_string())
            .id(&c.to_string())
    });
    let row = top + 8 + 3 * 54;
    let special = [
        ("delete", Rect::new(width - 50, top + 8 + 2 * 54, 46, 42)),
        ("space", Rect::new(width / 4, row, width / 2, 42)),
        ("return", Rect::new(width * 3 / 4 + 4, row, width / 4 - 8, 42)),
    ]
    .map(|(name, r)| Element::new("Key", r).label(name).id(name));
    Element::new("Keyboard", Rect::new(0, top, width, height)).children(keys.chain(special))
}
