//! What the Contacts app shows, as XCUITest elements, and where a tap acts (targets built with the
//! elements, so the two never disagree). Frames in points on a 402×874 screen.
//!
//! - List: NavigationBar `Contacts` (large-title StaticText, Button `Add`), SearchField `Search`
//!   (Button `Cancel` beside it once tapped), a Table of Cells by last name, each holding a
//!   StaticText of the name; a query nothing matches shows `No Results for “…”` instead.
//! - Card: NavigationBar with Buttons `Back` and `Edit`, the name as a heading, the company, a Cell
//!   `Contact Photo & Poster`, a Cell per phone (`mobile` and the number).
//! - Form (new or edit): NavigationBar (`New Contact` when new) with `Cancel` and `Done` (disabled
//!   without a first or last name), a ScrollView of TextFields `First name`, `Last name`, `Company`,
//!   a TextField per phone (label `mobile`, placeholder `Phone`), Cells `add phone` and more, and
//!   when editing a Button `Delete Contact` below the screen. Like a table, rows scrolled out of
//!   the ScrollView are not in the tree.
//! - The action sheet is modal: while it is up, only it is in the tree (VoiceOver's view of a
//!   modal sheet; XCUITest would also list the dimmed form behind it).

use super::app::{FakeApp, Screen};
use super::contacts::{Act, Contacts, Field, Form, Search, View};
use super::element::{Element, Rect, keyboard};

pub const SCREEN: Screen = Screen {
    width: 402,
    height: 874,
    scale: 3,
    status_bar: STATUS_BAR,
};
const W: i32 = SCREEN.width;
const H: i32 = SCREEN.height;
/// Below the status bar.
pub const STATUS_BAR: i32 = 62;
const KEYBOARD: i32 = 336;
const ROW: i32 = 44;
const NAV: i32 = STATUS_BAR + 44;
/// The form's scrolling part.
pub const FORM_VIEWPORT: Rect = Rect::new(0, NAV, W, H - NAV);

type Targets = Vec<(Rect, Act)>;

/// The app's windows, and the tap targets (later ones on top).
pub fn build(c: &Contacts) -> (Vec<Element>, Targets) {
    let mut t = Targets::new();
    let content = match &c.view {
        View::List => list(c, &mut t),
        View::Detail(id) => card(c, *id, &mut t),
        View::Form(f) if f.sheet => vec![sheet(&mut t)],
        View::Form(f) => form(f, &mut t),
    };
    let mut windows = vec![Element::new("Window", Rect::new(0, 0, W, H)).children(content)];
    if super::app::FakeApp::keyboard_shown(c) {
        windows.push(keyboard(W, H, KEYBOARD));
        t.push((Rect::new(0, H - KEYBOARD, W, KEYBOARD), Act::Nothing));
    }
    (windows, t)
}

fn button(label: &str, r: Rect, act: Act, t: &mut Targets) -> Element {
    t.push((r, act));
    Element::new("Button", r).label(label)
}

fn text(label: &str, r: Rect) -> Element {
    Element::new("StaticText", r).label(label)
}

fn list(c: &Contacts, t: &mut Targets) -> Vec<Element> {
    let nav = Element::new("NavigationBar", Rect::new(0, STATUS_BAR, W, 96))
        .id("Contacts")
        .child(button("Add", Rect::new(346, STATUS_BAR, 44, 44), Act::Add, t).id("Add"))
        .child(text("Contacts", Rect::new(16, STATUS_BAR + 48, 150, 41)).header());
    let top = STATUS_BAR + 96;
    let s = &c.search;
    let field_w = if s.active { 300 } else { W - 32 };
    let field = Rect::new(16, top, field_w, 36);
    t.push((field, Act::Search));
    let mut search = Element::new("SearchField", field)
        .label("Search")
        .placeholder("Search")
        .focused(s.focused);
    search.value = Some(s.query.clone()).filter(|q| !q.is_empty());
    let mut out = vec![nav, search];
    if s.active {
        out.push(button("Cancel", Rect::new(324, top, 62, 36), Act::CancelSearch, t));
    }
    let table_top = top + 44;
    let rows = c.rows();
    let cells = rows.iter().enumerate().map(|(i, p)| {
        let r = Rect::new(0, table_top + i as i32 * ROW, W, ROW);
        t.push((r, Act::Open(p.id)));
        let name = p.full_name();
        Element::new("Cell", r)
            .label(&name)
            .child(text(&name, Rect::new(16, r.y + 11, 300, 22)))
    });
    let table = Element::new("Table", Rect::new(0, table_top, W, H - table_top)).children(cells.collect::<Vec<_>>());
    out.push(table);
    if rows.is_empty() && !s.query.is_empty() {
        let r = Rect::new(0, table_top + 120, W, 70);
        out.push(
            Element::new("Other", r)
                .label(&format!("No Results for \u{201c}{}\u{201d}", s.query))
                .child(text("No Results", Rect::new(0, r.y, W, 30)))
                .child(text(
                    "Check the spelling or try a new search.",
                    Rect::new(0, r.y + 40, W, 20),
                )),
        );
    }
    out
}

fn card(c: &Contacts, id: u64, t: &mut Targets) -> Vec<Element> {
    let Some(p) = c.person(id) else { return Vec::new() };
    let nav = Element::new("NavigationBar", Rect::new(0, STATUS_BAR, W, 44))
        .child(button("Back", Rect::new(8, STATUS_BAR, 60, 44), Act::Back, t))
        .child(button("Edit", Rect::new(346, STATUS_BAR, 48, 44), Act::Edit(id), t));
    let mut out = vec![nav, text(&p.full_name(), Rect::new(16, 196, W - 32, 41)).header()];
    if !p.company.is_empty() && p.full_name() != p.company {
        out.push(text(&p.company, Rect::new(16, 240, W - 32, 20)));
    }
    let photo = Rect::new(16, 276, W - 32, ROW);
    out.push(
        Element::new("Cell", photo)
            .label("Contact Photo & Poster")
            .child(text("Contact Photo & Poster", Rect::new(32, photo.y + 11, 250, 22))),
    );
    for (i, phone) in p.phones.iter().enumerate() {
        let r = Rect::new(16, 336 + i as i32 * 64, W - 32, 60);
        out.push(
            Element::new("Cell", r)
                .child(text("mobile", Rect::new(32, r.y + 8, 200, 18)))
                .child(text(phone, Rect::new(32, r.y + 28, 300, 24))),
        );
    }
    out
}

/// The form's rows in content coordinates (top of the ScrollView = 0): each element and its tap.
fn form_rows(f: &Form) -> Vec<(Element, Act)> {
    let row = |y: i32| Rect::new(16, y, W - 32, ROW);
    let field = |label: &str, placeholder: &str, value: &str, y: i32, which: Field| {
        let mut e = Element::new("TextField", row(y))
            .label(label)
            .placeholder(placeholder)
            .focused(f.focus == Some(which));
        e.value = Some(value.to_owned()).filter(|v| !v.is_empty());
        (e, Act::Focus(which))
    };
    let mut rows = vec![
        field("First name", "First name", &f.first, 120, Field::First),
        field("Last name", "Last name", &f.last, 120 + ROW, Field::Last),
        field("Company", "Company", &f.company, 120 + 2 * ROW, Field::Company),
    ];
    let mut y = 120 + 3 * ROW + 24;
    for (i, phone) in f.phones.iter().enumerate() {
        rows.push(field("mobile", "Phone", phone, y, Field::Phone(i)));
        y += ROW;
    }
    let cell = |label: &str, y: i32| {
        Element::new("Cell", row(y))
            .label(label)
            .child(text(label, Rect::new(60, y + 11, 250, 22)))
    };
    rows.push((cell("add phone", y), Act::AddPhone));
    // The rest of iOS's form: rows that only push Delete Contact below the screen.
    let more = [
        "add email",
        "add pronouns",
        "Ringtone",
        "Text Tone",
        "add url",
        "add address",
        "add birthday",
        "add date",
        "add related name",
        "add social profile",
        "add instant message",
        "Notes",
        "add field",
    ];
    for label in more {
        y += ROW + 24;
        rows.push((cell(label, y), Act::Nothing));
    }
    if f.editing.is_some() {
        y += ROW + 24;
        rows.push((Element::new("Button", row(y)).label("Delete Contact"), Act::DeleteRow));
    }
    rows
}

/// How far the form scrolls: its content's end (plus a margin) at the screen's bottom.
pub fn max_scroll(c: &Contacts) -> i32 {
    let View::Form(f) = &c.view else { return 0 };
    let end = form_rows(f).last().map_or(0, |(e, _)| e.rect.y + e.rect.height) + 40;
    (end - FORM_VIEWPORT.height).max(0)
}

fn form(f: &Form, t: &mut Targets) -> Vec<Element> {
    let mut nav = Element::new("NavigationBar", Rect::new(0, STATUS_BAR, W, 44));
    if f.editing.is_none() {
        nav = nav
            .id("New Contact")
            .child(text("New Contact", Rect::new(150, STATUS_BAR + 11, 102, 22)).header());
    }
    let done = Rect::new(340, STATUS_BAR, 54, 44);
    let nav = nav
        .child(button("Cancel", Rect::new(8, STATUS_BAR, 70, 44), Act::FormCancel, t))
        .child(button("Done", done, if f.can_save() { Act::Done } else { Act::Nothing }, t).enabled(f.can_save()));
    let rows = form_rows(f).into_iter().filter_map(|(mut e, act)| {
        // Content coordinates to the screen: moved up by the scroll, under the navigation bar.
        let dy = FORM_VIEWPORT.y - f.scroll;
        e.rect.y += dy;
        for c in &mut e.children {
            c.rect.y += dy;
        }
        // A tap lands on the part of a row inside the ScrollView, never under the bar.
        let shown = e.rect.clip(&FORM_VIEWPORT)?;
        t.push((shown, act));
        Some(e)
    });
    let scroll = Element::new("ScrollView", FORM_VIEWPORT).children(rows.collect::<Vec<_>>());
    vec![nav, scroll]
}

fn sheet(t: &mut Targets) -> Element {
    // A tap outside the sheet's buttons dismisses it, as on a phone.
    t.push((Rect::new(0, 0, W, H), Act::CloseSheet));
    let delete = button("Delete Contact", Rect::new(8, 700, W - 16, 57), Act::ConfirmDelete, t);
    let cancel = button("Cancel", Rect::new(8, 765, W - 16, 57), Act::CloseSheet, t);
    Element::new("Sheet", Rect::new(8, 700, W - 16, 122))
        .child(delete)
        .child(cancel)
}

impl FakeApp for Contacts {
    fn bundle_id(&self) -> &str {
        "com.apple.MobileAddressBook"
    }

    fn name(&self) -> &str {
        "Contacts"
    }

    fn screen(&self) -> Screen {
        SCREEN
    }

    fn launch(&mut self) {
        self.view = View::List;
        self.search = Search::default();
    }

    fn terminate(&mut self) {
        self.launch();
    }

    fn windows(&mut self) -> Vec<Element> {
        build(self).0
    }

    fn tap(&mut self, x: f64, y: f64) {
        let (_, targets) = build(self);
        // Later targets are drawn on top.
        if let Some(&(_, act)) = targets.iter().rev().find(|(r, _)| r.contains(x, y)) {
            self.act(act);
        }
    }

    /// A vertical swipe in the form scrolls it by the finger's distance, within its ends; the
    /// list does not scroll (everything fits), so a pull-down there changes nothing.
    fn swipe(&mut self, from: (f64, f64), to: (f64, f64), _millis: u64) {
        let max = max_scroll(self);
        if let View::Form(f) = &mut self.view
            && !f.sheet
            && FORM_VIEWPORT.contains(from.0, from.1)
        {
            let dy = (from.1 - to.1).round() as i32;
            f.scroll = (f.scroll + dy).clamp(0, max);
        }
    }

    fn keyboard_shown(&self) -> bool {
        match &self.view {
            View::List => self.search.focused,
            View::Form(f) => f.focus.is_some(),
            View::Detail(_) => false,
        }
    }

    fn type_text(&mut self, text: &str) {
        if let Some(t) = self.typing_into() {
            t.push_str(text);
        }
    }

    fn delete_backward(&mut self) {
        if let Some(t) = self.typing_into() {
            t.pop();
        }
    }

    /// Search: the keyboard goes, the results stay. Form: the next field, or none after the last.
    fn press_return(&mut self) {
        match &mut self.view {
            View::List => self.search.focused = false,
            View::Form(f) => f.focus = f.focus.and_then(|field| f.next(field)),
            View::Detail(_) => {}
        }
    }

    fn dismiss_keyboard(&mut self) -> bool {
        let shown = self.keyboard_shown();
        self.search.focused = false;
        if let Some(f) = self.form_mut() {
            f.focus = None;
        }
        shown
    }
}
