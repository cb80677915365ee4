//! Warm session threads. The slowest part of starting a session is its script engine: the SDK
//! evaluated and the realm locked down (every intrinsic walked and frozen), ~3 ms. A project that
//! opens sessions again and again (a folder run, an MCP server, an embedding app) takes a thread whose
//! engine is already made, and a background thread makes the next one.
//!
//! Isolation is unchanged: a warm engine serves exactly one session and is never handed back, so no
//! session sees another's realm. The pool fills only once a project has started a second session
//! with the same catalog and limits, so a one-shot command (one `tool` call, one trail) makes no
//! engine it never uses; at most [`WarmPool::size`] engines wait per catalog.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak, mpsc};

use super::thread::TopUp;

use super::thread::{EngineKey, Spawned, spawn, spawn_lazy};

/// How many engines wait, unless `TRAILBLAZE_WARM_SESSIONS` says otherwise (0 turns the pool off).
const DEFAULT_SIZE: usize = 2;
/// Catalogs a pool keeps engines for (a project's targets); the least recently started goes first.
const MAX_KEYS: usize = 4;

/// A project's warm session threads, by what their engines were made for.
pub struct WarmPool {
    inner: Arc<Inner>,
}

struct Inner {
    size: usize,
    /// Sessions that started on a warm thread.
    hits: std::sync::atomic::AtomicU64,
    state: Mutex<State>,
    /// To the refill thread, started on first need.
    refill: Mutex<Option<mpsc::Sender<EngineKey>>>,
}

#[derive(Default)]
struct State {
    /// Most recently started key last.
    keys: Vec<Slot>,
}

struct Slot {
    key: EngineKey,
    starts: u64,
    warm: VecDeque<Spawned>,
}

impl Default for WarmPool {
    fn default() -> Self {
        let size = std::env::var("TRAILBLAZE_WARM_SESSIONS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_SIZE)
            .min(16);
        WarmPool::with_size(size)
    }
}

impl WarmPool {
    pub fn with_size(size: usize) -> WarmPool {
        WarmPool {
            inner: Arc::new(Inner {
                size,
                hits: Default::default(),
                state: Mutex::default(),
                refill: Mutex::new(None),
            }),
        }
    }

    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// How many sessions started on a warm thread so far.
    pub fn hits(&self) -> u64 {
        self.inner.hits.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many warm threads wait now, for every catalog.
    pub fn waiting(&self) -> usize {
        self.inner
            .state
            .lock()
            .map(|s| s.keys.iter().map(|slot| slot.warm.len()).sum())
            .unwrap_or(0)
    }

    /// A session thread for `key`: a warm one if one waits (made, or still being made: either is
    /// further along than a new one), else a new one; and what tops the pool up again, which the
    /// session runs after its first call (making an engine sooner would compete with the
    /// session's start and first call for a core).
    pub(super) fn take(&self, key: &EngineKey) -> std::io::Result<(Spawned, Option<TopUp>)> {
        let inner = &self.inner;
        if inner.size == 0 {
            return Ok((spawn_lazy(key.clone())?, None));
        }
        let (got, wanted) = {
            let Ok(mut state) = inner.state.lock() else {
                return Ok((spawn_lazy(key.clone())?, None));
            };
            let at = match state.keys.iter().position(|s| s.key == *key) {
                Some(at) => at,
                None => {
                    if state.keys.len() >= MAX_KEYS {
                        state.keys.remove(0);
                    }
                    state.keys.push(Slot {
                        key: key.clone(),
                        starts: 0,
                        warm: VecDeque::new(),
                    });
                    state.keys.len() - 1
                }
            };
            let mut slot = state.keys.remove(at);
            slot.starts += 1;
            let got = slot.warm.pop_front();
            let wanted = if slot.starts >= 2 {
                inner.size - slot.warm.len()
            } else {
                0
            };
            state.keys.push(slot);
            (got, wanted)
        };
        let top_up = (wanted > 0).then(|| {
            let pool = Arc::downgrade(inner);
            let key = key.clone();
            Box::new(move || {
                if let Some(inner) = pool.upgrade() {
                    for _ in 0..wanted {
                        inner.ask_refill(&key);
                    }
                }
            }) as TopUp
        });
        match got {
            Some(warm) => {
                inner.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok((warm, top_up))
            }
            None => Ok((spawn_lazy(key.clone())?, top_up)),
        }
    }
}

impl WarmPool {
    /// Has a thread start making an engine for `key` now, for a session that is about to start (a
    /// one-shot command knows its catalog before it has made its device and read its arguments):
    /// that session then starts on it as on a warm one. Not counted as a start, so it fills nothing;
    /// a pool of size 0 prepares nothing.
    pub(super) fn prepare(&self, key: EngineKey) {
        if self.inner.size == 0 {
            return;
        }
        let Ok(spawned) = spawn(key.clone()) else { return };
        let Ok(mut state) = self.inner.state.lock() else { return };
        match state.keys.iter_mut().find(|slot| slot.key == key) {
            Some(slot) if slot.warm.len() < self.inner.size => slot.warm.push_back(spawned),
            // Enough wait already: dropped, its thread ends once its engine is made.
            Some(_) => {}
            None => {
                if state.keys.len() >= MAX_KEYS {
                    state.keys.remove(0);
                }
                state.keys.push(Slot {
                    key,
                    starts: 0,
                    warm: VecDeque::from([spawned]),
                });
            }
        }
    }
}

impl Inner {
    /// Hands `key` to the refill thread (started here the first time), which spawns the thread off
    /// the caller's path.
    fn ask_refill(self: &Arc<Inner>, key: &EngineKey) {
        let Ok(mut refill) = self.refill.lock() else { return };
        if let Some(tx) = refill.as_ref()
            && tx.send(key.clone()).is_ok()
        {
            return;
        }
        let (tx, rx) = mpsc::channel::<EngineKey>();
        let pool = Arc::downgrade(self);
        let started = std::thread::Builder::new()
            .name("session-warmer".into())
            .spawn(move || refill_thread(&rx, &pool));
        if started.is_ok() && tx.send(key.clone()).is_ok() {
            *refill = Some(tx);
        }
    }
}

/// Spawns a thread for each key asked, while the pool lives and has room for it.
fn refill_thread(rx: &mpsc::Receiver<EngineKey>, pool: &Weak<Inner>) {
    while let Ok(key) = rx.recv() {
        let Some(inner) = pool.upgrade() else { return };
        let size = inner.size;
        let room = |s: &State| s.keys.iter().any(|slot| slot.key == key && slot.warm.len() < size);
        if !inner.state.lock().map(|s| room(&s)).unwrap_or(false) {
            continue;
        }
        let Ok(spawned) = spawn(key.clone()) else { continue };
        if let Ok(mut s) = inner.state.lock()
            && let Some(slot) = s.keys.iter_mut().find(|slot| slot.key == key)
            && slot.warm.len() < size
        {
            slot.warm.push_back(spawned);
        }
        // Otherwise dropping it closes its setup channel: the thread ends once its engine is made.
    }
}
