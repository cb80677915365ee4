//! Handle tables: a handle is an id into a table of `Arc`s, never a pointer, so a stale, forged or
//! freed handle is an error value instead of undefined behaviour, and freeing a handle while
//! another thread uses it only drops the table's reference.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::{FfiError, TbStatus};

/// Ids are shared by every table and never reused: a freed id stays dead.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub(crate) struct Table<T> {
    what: &'static str,
    items: Mutex<Option<HashMap<u64, Arc<T>>>>,
}

impl<T> Table<T> {
    pub(crate) const fn new(what: &'static str) -> Table<T> {
        Table {
            what,
            items: Mutex::new(None),
        }
    }

    /// Stores `item` and returns its new id (never 0).
    pub(crate) fn insert(&self, item: T) -> u64 {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        // A poisoned lock only means another thread panicked while holding it; the map is intact.
        let mut guard = self.items.lock().unwrap_or_else(|p| p.into_inner());
        guard.get_or_insert_with(HashMap::new).insert(id, Arc::new(item));
        id
    }

    pub(crate) fn get(&self, id: u64) -> Result<Arc<T>, FfiError> {
        let guard = self.items.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .as_ref()
            .and_then(|m| m.get(&id).cloned())
            .ok_or_else(|| self.bad(id))
    }

    /// Runs `f` on the object itself, which no other thread may be using at that moment (it is a
    /// setup step, e.g. adding a host function before any session opens).
    pub(crate) fn with_mut<R>(&self, id: u64, f: impl FnOnce(&mut T) -> Result<R, FfiError>) -> Result<R, FfiError> {
        let mut guard = self.items.lock().unwrap_or_else(|p| p.into_inner());
        let Some(item) = guard.as_mut().and_then(|m| m.get_mut(&id)) else {
            return Err(self.bad(id));
        };
        match Arc::get_mut(item) {
            Some(t) => f(t),
            None => Err(FfiError::new(
                TbStatus::Session,
                format!(
                    "the {} is in use on another thread; change it before using it",
                    self.what
                ),
            )),
        }
    }

    /// Removes the id; the object is dropped once no call holds it any more.
    pub(crate) fn remove(&self, id: u64) -> Result<Arc<T>, FfiError> {
        let mut guard = self.items.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_mut().and_then(|m| m.remove(&id)).ok_or_else(|| self.bad(id))
    }

    fn bad(&self, id: u64) -> FfiError {
        let why = if id == 0 { "a null" } else { "an unknown or freed" };
        FfiError::new(TbStatus::BadHandle, format!("{why} {} handle", self.what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_handle_is_an_error_and_a_live_one_is_not() {
        let t: Table<String> = Table::new("test");
        let id = t.insert("x".into());
        assert_eq!(
            t.get(id).map(|s| s.to_string()).ok().as_deref(),
            Some("x"),
            "control: live"
        );
        assert!(t.remove(id).is_ok());
        assert_eq!(t.remove(id).err().map(|e| e.status), Some(TbStatus::BadHandle));
        assert_eq!(t.get(0).err().map(|e| e.status), Some(TbStatus::BadHandle));
        assert_ne!(t.insert("y".into()), id, "ids are never reused");
    }
}
