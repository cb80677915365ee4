//! An object's members, read and made with QuickJS's own calls (the hot path of a host call).
//!
//! Reading: each key is read where QuickJS keeps it (an ASCII key is not copied) and only the
//! values become rquickjs values; rquickjs's safe iterator made a Rust `String` and took a context
//! reference per key, about a quarter of a small host call. Making: a member is defined on the
//! object itself, as `JSON.parse` makes it, not assigned.

use std::ffi::c_char;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::{self, NonNull};

use rquickjs::{Ctx, Object, Type, Value, qjs};

/// A value read where it is: lent by the caller (the top of a decoding: no reference taken and
/// dropped) or owned (a member or item read from it).
pub enum Held<'v, 'js> {
    Lent(&'v Value<'js>),
    Own(Value<'js>),
}

impl<'js> Deref for Held<'_, 'js> {
    type Target = Value<'js>;
    fn deref(&self) -> &Value<'js> {
        match self {
            Held::Lent(v) => v,
            Held::Own(v) => v,
        }
    }
}

impl<'v, 'js> From<&'v Value<'js>> for Held<'v, 'js> {
    fn from(v: &'v Value<'js>) -> Self {
        Held::Lent(v)
    }
}

impl<'js> From<Value<'js>> for Held<'_, 'js> {
    fn from(v: Value<'js>) -> Self {
        Held::Own(v)
    }
}

pub struct Members<'v, 'js> {
    obj: Held<'v, 'js>,
    tab: *mut qjs::JSPropertyEnum,
    len: u32,
    next: u32,
}

impl<'v, 'js> Members<'v, 'js> {
    /// The members of object `obj` in its own order (`Object.keys`'s); another value is an error.
    /// (A `Value`, not an `Object`: rquickjs's conversion asks an object six questions first.)
    pub fn new(obj: impl Into<Held<'v, 'js>>) -> rquickjs::Result<Self> {
        let obj = obj.into();
        let mut tab = ptr::null_mut();
        let mut len = 0u32;
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as _;
        // SAFETY: `obj` is a live value of its context; on success QuickJS hands `tab` (len atoms)
        // to us, and `Drop` gives it back.
        let rc = unsafe { qjs::JS_GetOwnPropertyNames(raw(obj.ctx()), &mut tab, &mut len, obj.as_raw(), flags) };
        if rc < 0 {
            return Err(rquickjs::Error::Exception);
        }
        Ok(Members { obj, tab, len, next: 0 })
    }

    /// How many members there are (read or not).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The next member's key only: its value is not read (a getter does not run).
    pub fn next_key<R>(&mut self, key: impl FnOnce(&Key<'_>) -> R) -> Option<R> {
        if self.next >= self.len {
            return None;
        }
        // SAFETY: `next < len`, and `tab` holds `len` entries until `Drop`.
        let atom = unsafe { (*self.tab.add(self.next as usize)).atom };
        self.next += 1;
        Some(key(&Key {
            ctx: raw(self.obj.ctx()),
            atom,
            lent: PhantomData,
        }))
    }

    /// The next member's key (for `key`, only as long as it runs) and its value. A getter that
    /// throws is an error; the value is read before the key is looked at.
    pub fn next<R>(&mut self, key: impl FnOnce(&Key<'_>, Value<'js>) -> R) -> Option<rquickjs::Result<R>> {
        if self.next >= self.len {
            return None;
        }
        // SAFETY: `next < len`, and `tab` holds `len` entries until `Drop`.
        let atom = unsafe { (*self.tab.add(self.next as usize)).atom };
        self.next += 1;
        let ctx = self.obj.ctx();
        // SAFETY: the atom is one of `obj`'s own keys, kept alive by `tab`; the value returned is
        // ours (a new reference), or the exception marker.
        let value = unsafe { qjs::JS_GetProperty(raw(ctx), self.obj.as_raw(), atom) };
        // SAFETY: checking a tag reads nothing else.
        if unsafe { qjs::JS_IsException(value) } {
            return Some(Err(rquickjs::Error::Exception));
        }
        // SAFETY: `value` is a new reference in this context, handed to the `Value` that owns it.
        let value = unsafe { Value::from_raw(ctx.clone(), value) };
        let lent = Key {
            ctx: raw(ctx),
            atom,
            lent: PhantomData,
        };
        Some(Ok(key(&lent, value)))
    }
}

impl Drop for Members<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: `tab` and its `len` atoms are ours (from `JS_GetOwnPropertyNames`); freed once.
        unsafe { qjs::JS_FreePropertyEnum(raw(self.obj.ctx()), self.tab, self.len) };
    }
}

/// A member's key, read only when asked.
pub struct Key<'a> {
    ctx: *mut qjs::JSContext,
    atom: qjs::JSAtom,
    /// Only while the `Members` that lent it is borrowed.
    lent: PhantomData<&'a ()>,
}

impl Key<'_> {
    /// Runs `f` on the key's text, borrowed from QuickJS; `None` when it is not valid UTF-8 (a lone
    /// surrogate) or cannot be read.
    pub fn with_str<R>(&self, f: impl FnOnce(&str) -> R) -> Option<R> {
        let mut len: qjs::size_t = 0;
        // SAFETY: the atom is alive (held by `Members::tab`); the pointer returned is valid for `len`
        // bytes until `JS_FreeCString`, which `Text` calls exactly once.
        let ptr = unsafe { qjs::JS_AtomToCStringLen(self.ctx, &mut len, self.atom) };
        let text = Text {
            ctx: self.ctx,
            ptr: NonNull::new(ptr.cast_mut())?,
        };
        // SAFETY: see above: `len` bytes at `ptr`, alive while `text` is.
        let bytes = unsafe { std::slice::from_raw_parts(text.ptr.as_ptr().cast::<u8>(), len as usize) };
        let s = std::str::from_utf8(bytes).ok()?;
        Some(f(s))
    }

    /// The key as an owned string (an enum's variant name).
    pub fn to_owned_string(&self) -> Option<String> {
        self.with_str(str::to_string)
    }
}

/// A C string QuickJS lent us, given back on drop.
struct Text {
    ctx: *mut qjs::JSContext,
    ptr: NonNull<c_char>,
}

impl Drop for Text {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `JS_AtomToCStringLen` in this context and is freed once, here.
        unsafe { qjs::JS_FreeCString(self.ctx, self.ptr.as_ptr()) };
    }
}

/// QuickJS's class of `{}` (`JS_CLASS_OBJECT`, first of its fixed classes; a test holds it to `{}`'s).
pub(super) const PLAIN_OBJECT_CLASS: qjs::JSClassID = 1;

/// [`Value::type_of`], asking an object only what a conversion tells apart (rquickjs's asks it six
/// questions, in order; a plain object answers all of them).
pub fn kind(v: &Value<'_>) -> Type {
    if !v.is_object() {
        // The tags arguments hold most, read inline (`type_of` is a call, and a match of every tag).
        return if v.is_string() {
            Type::String
        } else if v.is_int() {
            Type::Int
        } else if v.is_bool() {
            Type::Bool
        } else {
            v.type_of()
        };
    }
    // A plain object (arguments and most of what they hold) is told apart in one question.
    // SAFETY: reads the class of an object value; nothing is kept.
    if unsafe { qjs::JS_GetClassID(v.as_raw()) } == PLAIN_OBJECT_CLASS {
        return Type::Object;
    }
    if v.is_array() {
        Type::Array
    } else if v.is_function() {
        if v.is_constructor() {
            Type::Constructor
        } else {
            Type::Function
        }
    } else if v.is_promise() {
        Type::Promise
    } else if v.is_proxy() {
        Type::Proxy
    } else {
        Type::Object
    }
}

/// Objects with more members than this get no shape keeper: one object kept per host function
/// should stay small.
pub const MAX_KEPT_MEMBERS: usize = 32;

/// An empty object given `obj`'s members (as `undefined`) in `obj`'s order: while it lives, it
/// holds the shape (QuickJS's member layout) objects built like `obj` take. QuickJS shares a shape
/// between such objects only while one of them lives; objects dropped before the next call took
/// theirs with them, and each call made it again (cloned, extended, hashed, freed). Only keys are
/// read (no getter runs); `None` for an object of more than [`MAX_KEPT_MEMBERS`] members.
pub fn shape_keeper<'js>(obj: &Object<'js>) -> rquickjs::Result<Option<Object<'js>>> {
    let ctx = obj.ctx();
    let mut members = Members::new(obj.as_value())?;
    if members.len() > MAX_KEPT_MEMBERS {
        return Ok(None);
    }
    let keeper = Object::new(ctx.clone())?;
    while let Some(member) =
        members.next_key(|key| key.with_str(|k| define(&keeper, k, Value::new_undefined(ctx.clone()))))
    {
        member.unwrap_or(Err(rquickjs::Error::Unknown))?;
    }
    Ok(Some(keeper))
}

/// Defines `obj[key] = value` as an own, enumerable, writable, configurable data member, as
/// `JSON.parse` does: no setter up the prototype chain runs (`Object.prototype.__proto__`'s would
/// make a result's `"__proto__"` key its prototype instead), and no walk up that chain looks for one.
pub fn define<'js>(obj: &Object<'js>, key: &str, value: Value<'js>) -> rquickjs::Result<()> {
    let ctx = raw(obj.ctx());
    // SAFETY: `key` is `len` bytes of UTF-8; the atom returned is ours and freed below.
    let atom = unsafe { qjs::JS_NewAtomLen(ctx, key.as_ptr().cast(), key.len() as _) };
    if atom == qjs::JS_ATOM_NULL {
        return Err(rquickjs::Error::Exception);
    }
    // SAFETY: `JS_DefinePropertyValue` takes a reference to the value (the one duplicated here;
    // `value` keeps and drops its own) and does not take the atom, which is freed once, here.
    let rc = unsafe {
        let rc = qjs::JS_DefinePropertyValue(
            ctx,
            obj.as_raw(),
            atom,
            qjs::JS_DupValue(ctx, value.as_raw()),
            qjs::JS_PROP_C_W_E as _,
        );
        qjs::JS_FreeAtom(ctx, atom);
        rc
    };
    if rc < 0 {
        return Err(rquickjs::Error::Exception);
    }
    Ok(())
}

fn raw(ctx: &Ctx<'_>) -> *mut qjs::JSContext {
    ctx.as_raw().as_ptr()
}
