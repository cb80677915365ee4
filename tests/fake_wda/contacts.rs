//! A Contacts app shaped like iOS's (bundle `com.apple.MobileAddressBook`, 402×874 points at scale
//! 3), enough for the original Trailblaze's iOS Contacts tools and trails: the list with its search,
//! a contact's card, the new-contact and edit forms, deleting through an action sheet. Contacts
//! persist like a database across launches; a launch opens the list root with no search. What each
//! screen shows, and how it answers WDA, is in `contacts_ui`.

/// What a tap on a target does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    Add,
    Search,
    CancelSearch,
    Open(u64),
    Back,
    Edit(u64),
    FormCancel,
    Done,
    Focus(Field),
    AddPhone,
    DeleteRow,
    CloseSheet,
    ConfirmDelete,
    /// Covers what is below it (a disabled button, the keyboard).
    Nothing,
}

/// A saved contact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub id: u64,
    pub first: String,
    pub last: String,
    pub company: String,
    /// Each a `mobile` number.
    pub phones: Vec<String>,
}

impl Person {
    /// The name the list and the card show: first and last, else the company.
    pub fn full_name(&self) -> String {
        let name = format!("{} {}", self.first.trim(), self.last.trim());
        match name.trim() {
            "" => self.company.trim().to_owned(),
            n => n.to_owned(),
        }
    }

    fn sort_key(&self) -> (String, String) {
        let last = if self.last.trim().is_empty() {
            &self.first
        } else {
            &self.last
        };
        (last.trim().to_lowercase(), self.first.trim().to_lowercase())
    }
}

/// A field of the new-contact or edit form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    First,
    Last,
    Company,
    Phone(usize),
}

/// The form's draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Form {
    /// The contact being edited; `None` for a new one.
    pub editing: Option<u64>,
    pub first: String,
    pub last: String,
    pub company: String,
    pub phones: Vec<String>,
    pub focus: Option<Field>,
    /// How far the form is scrolled up, in points.
    pub scroll: i32,
    /// The "Delete Contact" action sheet is up.
    pub sheet: bool,
}

impl Form {
    /// A contact needs a first or a last name.
    pub fn can_save(&self) -> bool {
        !self.first.trim().is_empty() || !self.last.trim().is_empty()
    }

    pub fn text_mut(&mut self, f: Field) -> Option<&mut String> {
        match f {
            Field::First => Some(&mut self.first),
            Field::Last => Some(&mut self.last),
            Field::Company => Some(&mut self.company),
            Field::Phone(i) => self.phones.get_mut(i),
        }
    }

    /// The field after `f` (return moves on); `None` after the last.
    pub(super) fn next(&self, f: Field) -> Option<Field> {
        match f {
            Field::First => Some(Field::Last),
            Field::Last => Some(Field::Company),
            Field::Company if self.phones.is_empty() => None,
            Field::Company => Some(Field::Phone(0)),
            Field::Phone(i) => (i + 1 < self.phones.len()).then_some(Field::Phone(i + 1)),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum View {
    List,
    Detail(u64),
    Form(Form),
}

/// The list's search: `active` once the field was tapped (Cancel shows), `focused` while the
/// keyboard types into it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Search {
    pub query: String,
    pub active: bool,
    pub focused: bool,
}

pub struct Contacts {
    people: Vec<Person>,
    next_id: u64,
    pub(super) view: View,
    pub(super) search: Search,
}

impl Default for Contacts {
    fn default() -> Self {
        Contacts::new()
    }
}

impl Contacts {
    /// The iOS simulator's seeded contacts, each with a mobile number.
    pub fn new() -> Contacts {
        let seed = [
            ("Kate", "Bell", "Creative Consulting", "(555) 564-8583"),
            ("Daniel", "Higgins Jr.", "", "555-478-7672"),
            ("John", "Appleseed", "", "888-555-5512"),
            ("Anna", "Haro", "", "555-522-8243"),
            ("Hank M.", "Zakroff", "Financial Services Inc.", "(555) 766-4823"),
            ("David", "Taylor", "", "555-610-6679"),
        ];
        let people = seed
            .iter()
            .zip(1..)
            .map(|(&(first, last, company, phone), id)| Person {
                id,
                first: first.into(),
                last: last.into(),
                company: company.into(),
                phones: vec![phone.into()],
            })
            .collect::<Vec<_>>();
        Contacts {
            next_id: people.len() as u64 + 1,
            people,
            view: View::List,
            search: Search::default(),
        }
    }

    /// Every saved contact, in the order they were added.
    pub fn people(&self) -> &[Person] {
        &self.people
    }

    /// Every contact, sorted as the list shows them (by last name).
    pub fn sorted(&self) -> Vec<&Person> {
        let mut all: Vec<&Person> = self.people.iter().collect();
        all.sort_by_key(|p| p.sort_key());
        all
    }

    /// The rows the list shows: all, or those whose name holds the query (any case).
    pub fn rows(&self) -> Vec<&Person> {
        let q = self.search.query.to_lowercase();
        self.sorted()
            .into_iter()
            .filter(|p| q.is_empty() || p.full_name().to_lowercase().contains(&q))
            .collect()
    }

    pub fn person(&self, id: u64) -> Option<&Person> {
        self.people.iter().find(|p| p.id == id)
    }

    pub(super) fn act(&mut self, act: Act) {
        match act {
            Act::Add => self.view = View::Form(self.draft(None)),
            Act::Search => {
                self.search.active = true;
                self.search.focused = true;
            }
            Act::CancelSearch => self.search = Search::default(),
            Act::Open(id) => {
                self.search.focused = false;
                self.view = View::Detail(id);
            }
            Act::Back => self.view = View::List,
            Act::Edit(id) => self.view = View::Form(self.draft(Some(id))),
            Act::FormCancel => {
                self.view = match self.view_form().and_then(|f| f.editing) {
                    Some(id) => View::Detail(id),
                    None => View::List,
                }
            }
            Act::Done => self.save(),
            Act::Focus(f) => {
                if let Some(form) = self.form_mut() {
                    form.focus = Some(f);
                }
            }
            Act::AddPhone => {
                if let Some(form) = self.form_mut() {
                    form.phones.push(String::new());
                    form.focus = Some(Field::Phone(form.phones.len() - 1));
                }
            }
            Act::DeleteRow => {
                if let Some(form) = self.form_mut() {
                    form.focus = None;
                    form.sheet = true;
                }
            }
            Act::CloseSheet => {
                if let Some(form) = self.form_mut() {
                    form.sheet = false;
                }
            }
            Act::ConfirmDelete => {
                if let Some(id) = self.view_form().and_then(|f| f.editing) {
                    self.people.retain(|p| p.id != id);
                }
                // Back on the list, the search as it was (iOS pops to the results).
                self.view = View::List;
            }
            Act::Nothing => {}
        }
    }

    fn draft(&self, editing: Option<u64>) -> Form {
        let p = editing.and_then(|id| self.person(id));
        Form {
            editing,
            first: p.map(|p| p.first.clone()).unwrap_or_default(),
            last: p.map(|p| p.last.clone()).unwrap_or_default(),
            company: p.map(|p| p.company.clone()).unwrap_or_default(),
            phones: p.map(|p| p.phones.clone()).unwrap_or_default(),
            focus: None,
            scroll: 0,
            sheet: false,
        }
    }

    fn save(&mut self) {
        let Some(form) = self.view_form().cloned() else { return };
        if !form.can_save() {
            return;
        }
        let id = form.editing.unwrap_or_else(|| {
            self.next_id += 1;
            self.next_id - 1
        });
        let person = Person {
            id,
            first: form.first.trim().to_owned(),
            last: form.last.trim().to_owned(),
            company: form.company.trim().to_owned(),
            phones: form
                .phones
                .iter()
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect(),
        };
        match self.people.iter_mut().find(|p| p.id == id) {
            Some(p) => *p = person,
            None => self.people.push(person),
        }
        self.view = View::Detail(id);
    }

    fn view_form(&self) -> Option<&Form> {
        match &self.view {
            View::Form(f) => Some(f),
            _ => None,
        }
    }

    pub(super) fn form_mut(&mut self) -> Option<&mut Form> {
        match &mut self.view {
            View::Form(f) => Some(f),
            _ => None,
        }
    }

    /// The text the keyboard types into now.
    pub(super) fn typing_into(&mut self) -> Option<&mut String> {
        match &mut self.view {
            View::List if self.search.focused => Some(&mut self.search.query),
            View::Form(f) => f.focus.and_then(|field| f.text_mut(field)),
            _ => None,
        }
    }
}
