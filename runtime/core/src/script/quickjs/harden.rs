//! The realm lockdown's walk: freezes everything reachable from the roots the bootstrap hands over
//! (values, accessors and prototypes), so that nothing one tool changes in what a session's tools
//! share reaches another.
//!
//! It was JavaScript in the bootstrap, and three quarters of making an engine: a descriptor object
//! allocated for every property of every intrinsic. Here it reads QuickJS's descriptors in place.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::mem::MaybeUninit;

use rquickjs::{Ctx, Value, qjs};

/// Freezes every object reachable from `roots`.
pub(super) fn harden<'js>(ctx: &Ctx<'js>, roots: Vec<Value<'js>>) -> rquickjs::Result<()> {
    let c = ctx.as_raw().as_ptr();
    let mut seen: HashSet<usize, BuildHasherDefault<Address>> =
        HashSet::with_capacity_and_hasher(4096, Default::default());
    let mut todo = roots;
    while let Some(v) = todo.pop() {
        if !v.is_object() {
            continue;
        }
        let raw = v.as_raw();
        // SAFETY: `v` is an object, so its JSValue holds a pointer; it is only compared here.
        if !seen.insert(unsafe { qjs::JS_VALUE_GET_PTR(raw) } as usize) {
            continue;
        }
        if let Some(proto) = v.as_object().and_then(|o| o.get_prototype()) {
            todo.push(proto.into_value());
        }
        // SAFETY: `c` is the context `v` lives in, entered for the length of this call; every value
        // QuickJS hands back here is owned and goes into a `Value` (which frees it); the property
        // table is freed before leaving the block.
        unsafe {
            let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
            let mut len: u32 = 0;
            let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_SYMBOL_MASK) as std::ffi::c_int;
            if qjs::JS_GetOwnPropertyNames(c, &mut tab, &mut len, raw, flags) < 0 {
                return Err(rquickjs::Error::Exception);
            }
            let mut failed = false;
            for i in 0..len as usize {
                let atom = (*tab.add(i)).atom;
                let mut d = MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
                match qjs::JS_GetOwnProperty(c, d.as_mut_ptr(), raw, atom) {
                    r if r < 0 => {
                        failed = true;
                        break;
                    }
                    0 => {}
                    _ => {
                        let d = d.assume_init();
                        todo.push(Value::from_raw(ctx.clone(), d.value));
                        todo.push(Value::from_raw(ctx.clone(), d.getter));
                        todo.push(Value::from_raw(ctx.clone(), d.setter));
                    }
                }
            }
            qjs::JS_FreePropertyEnum(c, tab, len);
            if failed || qjs::JS_FreezeObject(c, raw) < 0 {
                return Err(rquickjs::Error::Exception);
            }
        }
    }
    Ok(())
}

/// Hashes an object's address: thousands of lookups per engine, where SipHash's care for hostile
/// keys buys nothing (the keys are QuickJS's own pointers).
#[derive(Default)]
struct Address(u64);

impl Hasher for Address {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Objects are 16-byte aligned: the low bits say nothing.
        self.0 = ((n as u64) >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
