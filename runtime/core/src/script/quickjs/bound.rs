//! `ctx.host.<name>`: each host function a script may call, bound as a QuickJS C closure that holds
//! its entry. The hot path of a host call: QuickJS calls straight into [`call`], with none of the
//! steps a general rquickjs function takes on every call (its class lookup, its parameter
//! conversions, a second panic guard). What the call does is [`super::host_call`]'s, as for
//! `callHost`.

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::NonNull;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::{Ctx, Function, Object, Value, qjs};
use trailblaze_host_functions::HostFunctionEntry;
use trailblaze_host_functions::quickjs::object::shape_keeper;

use super::EngineState;

/// What one binding holds: the engine's state and the function's entry. Owned by the closure
/// (freed by [`release`] when QuickJS frees the function).
struct Binding {
    state: Rc<EngineState>,
    entry: Arc<HostFunctionEntry>,
    /// Whether the shapes of the function's argument and result are kept ([`keep_shape`]): after
    /// its first call.
    shape_kept: Cell<bool>,
}

/// The objects that hold the shapes of host functions' first arguments and results
/// ([`shape_keeper`](trailblaze_host_functions::quickjs::object::shape_keeper)): the next ones,
/// built alike (a script's object literal, the serializer's object), reuse the shape instead of
/// making it again. Runtime userdata, dropped before the runtime is freed.
#[derive(Default)]
struct KeptShapes<'js>(RefCell<Vec<Object<'js>>>);

// SAFETY: `'js` is the runtime's lifetime, which the userdata map stands for.
unsafe impl<'js> rquickjs::JsLifetime<'js> for KeptShapes<'js> {
    type Changed<'to> = KeptShapes<'to>;
}

/// Keeps the shape of `value`, an argument or a result, if it is a plain object. Best effort: a
/// shape not kept costs time, never a result.
fn keep_shape<'js>(ctx: &Ctx<'js>, value: &Value<'js>) {
    // Plain objects only (an array's shape is not its items'; a class instance's is its class's).
    if trailblaze_host_functions::quickjs::object::kind(value) != rquickjs::Type::Object {
        return;
    }
    let Some(obj) = value.as_object() else {
        return;
    };
    let Ok(Some(keeper)) = shape_keeper(obj) else { return };
    if ctx.userdata::<KeptShapes>().is_none() {
        let _ = ctx.store_userdata(KeptShapes::default());
    }
    if let Some(kept) = ctx.userdata::<KeptShapes>() {
        kept.0.borrow_mut().push(keeper);
    }
}

/// The function a script calls as `ctx.host.<entry.name>(args)`.
pub(super) fn host_function<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<EngineState>,
    entry: Arc<HostFunctionEntry>,
) -> rquickjs::Result<Function<'js>> {
    let name = std::ffi::CString::new(entry.name.as_bytes()).map_err(|_| rquickjs::Error::Unknown)?;
    let binding = Box::into_raw(Box::new(Binding {
        state: state.clone(),
        entry,
        shape_kept: Cell::new(false),
    }));
    // SAFETY: QuickJS keeps `binding` as the closure's opaque value, hands it to `call` on every
    // call and to `release` once, when it frees the function. (Out of memory before it keeps it,
    // the one binding leaks: the engine fails to start then.)
    let raw = unsafe {
        qjs::JS_NewCClosure(
            ctx.as_raw().as_ptr(),
            Some(call),
            name.as_ptr(),
            Some(release),
            1,
            0,
            binding.cast(),
        )
    };
    // SAFETY: a new reference (or the exception marker, checked before it is used as a function).
    let value = unsafe { Value::from_raw(ctx.clone(), raw) };
    if value.is_exception() {
        return Err(rquickjs::Error::Exception);
    }
    value.into_function().ok_or(rquickjs::Error::Unknown)
}

unsafe extern "C" fn release(opaque: *mut c_void) {
    // A panic must not unwind into C; dropping the state's last reference cannot fail otherwise.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `opaque` is the `Box<Binding>` made in `host_function`, released once, here.
        drop(unsafe { Box::from_raw(opaque.cast::<Binding>()) });
    }));
}

unsafe extern "C" fn call(
    raw: *mut qjs::JSContext,
    _this: qjs::JSValue,
    argc: c_int,
    argv: *mut qjs::JSValue,
    _magic: c_int,
    opaque: *mut c_void,
) -> qjs::JSValue {
    let Some(raw) = NonNull::new(raw) else {
        return qjs::JS_EXCEPTION;
    };
    // SAFETY: QuickJS calls with the context the function lives in, on the thread that holds the
    // runtime (the engine's), while the binding is alive.
    let ctx = unsafe { Ctx::from_raw(raw) };
    let binding = unsafe { &*opaque.cast::<Binding>() };
    let run = AssertUnwindSafe(|| {
        let args = if argc > 0 && !argv.is_null() {
            // SAFETY: `argv` holds `argc` borrowed values; the `Value` takes a reference of its own.
            unsafe { Value::from_raw(ctx.clone(), qjs::JS_DupValue(raw.as_ptr(), *argv)) }
        } else {
            Value::new_undefined(ctx.clone())
        };
        let entry = &binding.entry;
        if binding.shape_kept.get() {
            return super::host_call(&ctx, &binding.state, &entry.name, Some(entry), args);
        }
        // The first call: the shapes of its argument and its result are kept for the next ones.
        binding.shape_kept.set(true);
        keep_shape(&ctx, &args);
        let result = super::host_call(&ctx, &binding.state, &entry.name, Some(entry), args);
        if let Ok(value) = &result {
            keep_shape(&ctx, value);
        }
        result
    });
    match catch_unwind(run) {
        // SAFETY: the value returned is a reference of its own; `value` drops the one it held.
        Ok(Ok(value)) => unsafe { qjs::JS_DupValue(raw.as_ptr(), value.as_raw()) },
        Ok(Err(rquickjs::Error::Exception)) => qjs::JS_EXCEPTION,
        Ok(Err(other)) => {
            let _ = rquickjs::Exception::throw_message(&ctx, &other.to_string());
            qjs::JS_EXCEPTION
        }
        Err(_) => {
            let message = format!("host function {} panicked", binding.entry.name);
            let _ = rquickjs::Exception::throw_message(&ctx, &message);
            qjs::JS_EXCEPTION
        }
    }
}
