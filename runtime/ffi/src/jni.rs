//! JNI entry points for `dev.trailblaze.TrailblazeNative` (java/dev/trailblaze/), over the same
//! operations as the C ABI, and a `Device` implemented by a Java object.
//!
//! Errors become a thrown `dev.trailblaze.TrailblazeException(kind, message)`; a Java exception
//! thrown by the device becomes a `DeviceError` (`DeviceRefusedException`: the action was refused,
//! a failed step; anything else: the device failed). Native methods return with their local
//! references freed by the JVM; device callbacks run on the session's thread, attached to the JVM
//! once as a daemon, each inside its own local frame.

use jni::JNIEnv;
use jni::errors::Error as JniError;
use jni::objects::{GlobalRef, JClass, JObject, JString, JThrowable, JValue};
use jni::sys::{jlong, jstring};
use serde_json::{Value, json};
use trailblaze::device::{Device, DeviceError, KeyCode, LaunchMode, Screenshot, ViewTree};

use crate::device::{key_name, mode_name};
use crate::ops::{self, PROJECTS, SESSIONS};
use crate::{FfiError, TbStatus, guarded};

const EXCEPTION: &str = "dev/trailblaze/TrailblazeException";

/// Throws `TrailblazeException(kind, message)`; falls back to a plain `RuntimeException`.
fn throw(env: &mut JNIEnv, e: &FfiError) {
    if env.exception_check().unwrap_or(true) {
        return; // a Java exception is already pending: let it propagate
    }
    let made = env.with_local_frame(4, |env| -> Result<(), JniError> {
        let kind = env.new_string(e.status.name())?;
        let message = env.new_string(&e.message)?;
        let obj = env.new_object(
            EXCEPTION,
            "(Ljava/lang/String;Ljava/lang/String;)V",
            &[JValue::Object(&kind), JValue::Object(&message)],
        )?;
        env.throw(JThrowable::from(obj))
    });
    if made.is_err() && !env.exception_check().unwrap_or(true) {
        let _ = env.throw_new("java/lang/RuntimeException", &e.message);
    }
}

fn jstr(env: &mut JNIEnv, s: &JString, what: &str) -> Result<String, FfiError> {
    if s.is_null() {
        return Err(FfiError::new(TbStatus::BadInput, format!("{what}: null")));
    }
    env.get_string(s)
        .map(String::from)
        .map_err(|_| FfiError::new(TbStatus::BadInput, format!("{what}: not a readable string")))
}

/// A JSON argument; null or empty reads as `{}`.
fn jjson(env: &mut JNIEnv, s: &JString, what: &str) -> Result<Value, FfiError> {
    if s.is_null() {
        return Ok(json!({}));
    }
    let t = jstr(env, s, what)?;
    if t.trim().is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_str(&t).map_err(|e| FfiError::new(TbStatus::BadInput, format!("{what}: invalid JSON: {e}")))
}

/// Runs `f` with panics caught; an error is thrown and `fallback` returned.
fn entry<T>(env: &mut JNIEnv, fallback: T, f: impl FnOnce(&mut JNIEnv) -> Result<T, FfiError>) -> T {
    match guarded(|| f(env)) {
        Ok(v) => v,
        Err(e) => {
            throw(env, &e);
            fallback
        }
    }
}

fn to_jstring(env: &mut JNIEnv, s: String) -> Result<jstring, FfiError> {
    env.new_string(s)
        .map(JString::into_raw)
        .map_err(|_| FfiError::new(TbStatus::Io, "cannot make a Java string"))
}

fn handle(id: jlong) -> u64 {
    id as u64
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_openProject<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    root: JString<'l>,
    options: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let root = jstr(env, &root, "root")?;
        let opts = jjson(env, &options, "options")?;
        ops::open_project(std::path::Path::new(&root), &opts, None).map(|id| id as jlong)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_openProjectFiles<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    files: JString<'l>,
    options: JString<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let files = jjson(env, &files, "files")?;
        let mut opts = jjson(env, &options, "options")?;
        let temp = opts
            .as_object_mut()
            .and_then(|m| m.remove("tempDir"))
            .and_then(|v| v.as_str().map(str::to_string));
        let dir = crate::files::materialize(&files, temp.as_deref().map(std::path::Path::new))?;
        let root = dir.path().to_path_buf();
        ops::open_project(&root, &opts, Some(dir)).map(|id| id as jlong)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_closeProject<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    project: jlong,
) {
    entry(&mut env, (), |_| PROJECTS.remove(handle(project)).map(drop))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_openSession<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    project: jlong,
    trailmap: JString<'l>,
    options: JString<'l>,
    device: JObject<'l>,
) -> jlong {
    entry(&mut env, 0, |env| {
        let trailmap = jstr(env, &trailmap, "trailmap")?;
        let opts = jjson(env, &options, "options")?;
        let device: Option<Box<dyn Device>> = if device.is_null() {
            None
        } else {
            Some(Box::new(JavaDevice::new(env, &device)?))
        };
        ops::open_session(handle(project), &trailmap, &opts, device).map(|id| id as jlong)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_call<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    session: jlong,
    tool: JString<'l>,
    args: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let tool = jstr(env, &tool, "tool")?;
        let args = jjson(env, &args, "args")?;
        let result = ops::call(handle(session), &tool, args)?;
        to_jstring(env, result)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_steps<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    session: jlong,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let steps = ops::steps(handle(session))?;
        to_jstring(env, steps)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_runTrail<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    session: jlong,
    path: JString<'l>,
    options: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let path = jstr(env, &path, "path")?;
        let opts = jjson(env, &options, "options")?;
        let report = ops::run_trail(handle(session), &path, &opts)?;
        to_jstring(env, report)
    })
}

/// Runs trails on the simulated device; returns the report JSON (the run handle stays internal).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_runTrails<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    project: jlong,
    options: JString<'l>,
) -> jstring {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let opts = jjson(env, &options, "options")?;
        let run = ops::run_trails(handle(project), &opts)?;
        let report = ops::run_report(run);
        let _ = crate::ops::RUNS.remove(run);
        to_jstring(env, report?)
    })
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_closeSession<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    session: jlong,
) {
    entry(&mut env, (), |_| SESSIONS.remove(handle(session)).map(drop))
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_trailblaze_TrailblazeNative_addHostFunction<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    project: jlong,
    name: JString<'l>,
    schema: JString<'l>,
    function: JObject<'l>,
) {
    entry(&mut env, (), |env| {
        let name = jstr(env, &name, "name")?;
        let schema = jjson(env, &schema, "schema")?;
        if function.is_null() {
            return Err(FfiError::new(TbStatus::BadInput, "function: null"));
        }
        let f = java_host_function(env, &function)?;
        crate::host::add(handle(project), &name, schema, f)
    })
}

/// A `dev.trailblaze.HostFunction` Java object as a host function: called on whichever session
/// thread calls it, attached to the JVM as a daemon, inside a local frame.
fn java_host_function(
    env: &mut JNIEnv,
    function: &JObject,
) -> Result<trailblaze_host_functions::DynamicHostFn, FfiError> {
    let fail = |_| FfiError::new(TbStatus::Session, "cannot hold the Java host function");
    let vm = env.get_java_vm().map_err(fail)?;
    let global = env.new_global_ref(function).map_err(fail)?;
    Ok(std::sync::Arc::new(move |args: Value| {
        let mut env = vm
            .attach_current_thread_as_daemon()
            .map_err(|e| format!("cannot attach to the JVM: {e}"))?;
        let answer = env.with_local_frame(8, |env| -> Result<Result<Value, String>, JniError> {
            let text = env.new_string(args.to_string())?;
            match env.call_method(
                global.as_obj(),
                "call",
                "(Ljava/lang/String;)Ljava/lang/String;",
                &[JValue::Object(&text)],
            ) {
                Ok(v) => Ok(match string_result(env, v)? {
                    Some(s) => crate::host::answer(true, s.into_bytes()),
                    None => Ok(Value::Null),
                }),
                Err(JniError::JavaException) => Ok(Err(take_exception(env)?.1)),
                Err(e) => Ok(Err(format!("JNI: {e}"))),
            }
        });
        answer.unwrap_or_else(|e| {
            let _ = env.exception_clear();
            Err(format!("JNI: {e}"))
        })
    }))
}

/// Clears the pending Java exception and returns it with its `toString()` (class and message).
fn take_exception<'l>(env: &mut JNIEnv<'l>) -> Result<(JThrowable<'l>, String), JniError> {
    let t = env.exception_occurred()?;
    env.exception_clear()?;
    let text = env.call_method(&t, "toString", "()Ljava/lang/String;", &[])?.l()?;
    let text: String = env.get_string(&JString::from(text))?.into();
    Ok((t, text))
}

/// A `dev.trailblaze.Device` Java object as a session's device.
struct JavaDevice {
    vm: jni::JavaVM,
    device: GlobalRef,
    /// Looked up on the caller's thread: on Android, `FindClass` on a native thread sees only the
    /// system class loader, not the APK's classes.
    refused: GlobalRef,
    captures: u64,
}

impl JavaDevice {
    fn new(env: &mut JNIEnv, device: &JObject) -> Result<JavaDevice, FfiError> {
        let fail = |_| FfiError::new(TbStatus::Session, "cannot hold the Java device");
        let vm = env.get_java_vm().map_err(fail)?;
        let global = env.new_global_ref(device).map_err(fail)?;
        let class = env.find_class("dev/trailblaze/DeviceRefusedException").map_err(|_| {
            let _ = env.exception_clear();
            FfiError::new(
                TbStatus::Session,
                "class dev.trailblaze.DeviceRefusedException not found",
            )
        })?;
        let refused = env.new_global_ref(&class).map_err(fail)?;
        let _ = env.delete_local_ref(class);
        Ok(JavaDevice {
            vm,
            device: global,
            refused,
            captures: 0,
        })
    }

    /// Calls `f` on this thread's JNI env inside a local frame; a Java exception becomes a
    /// `DeviceError` (its class and message, via `toString`).
    fn with<T>(&self, f: impl FnOnce(&mut JNIEnv, &JObject) -> Result<T, JniError>) -> Result<T, DeviceError> {
        let mut env = self
            .vm
            .attach_current_thread_as_daemon()
            .map_err(|e| DeviceError::Io(format!("cannot attach to the JVM: {e}")))?;
        let device = self.device.as_obj();
        let refused = self.refused.as_obj();
        env.with_local_frame(16, |env| -> Result<Result<T, DeviceError>, JniError> {
            match f(env, device) {
                Ok(v) => Ok(Ok(v)),
                Err(JniError::JavaException) => {
                    let (t, text) = take_exception(env)?;
                    let is_refused = env.is_instance_of(&t, <&JClass>::from(refused))?;
                    Ok(Err(if is_refused {
                        DeviceError::Action(text)
                    } else {
                        DeviceError::Io(text)
                    }))
                }
                Err(e) => Ok(Err(DeviceError::Io(format!("JNI: {e}")))),
            }
        })
        .unwrap_or_else(|e| {
            let _ = env.exception_clear();
            Err(DeviceError::Io(format!("JNI: {e}")))
        })
    }
}

fn string_result(env: &mut JNIEnv, v: jni::objects::JValueOwned) -> Result<Option<String>, JniError> {
    let obj = v.l()?;
    if obj.is_null() {
        return Ok(None);
    }
    Ok(Some(env.get_string(&JString::from(obj))?.into()))
}

impl Device for JavaDevice {
    fn name(&self) -> String {
        "jvm".into()
    }

    fn snapshot(&mut self) -> Result<ViewTree, DeviceError> {
        let text = self.with(|env, d| {
            let v = env.call_method(d, "snapshot", "()Ljava/lang/String;", &[])?;
            string_result(env, v)
        })?;
        let text = text.ok_or_else(|| DeviceError::Io("snapshot() returned null".into()))?;
        self.captures += 1;
        trailblaze::device::limits::tree_from_json(text.as_bytes())
            .map_err(|e| DeviceError::Io(format!("the snapshot is not a view tree: {e}")))
    }

    fn captures(&self) -> u64 {
        self.captures
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.with(|env, d| {
            env.call_method(d, "tap", "(II)V", &[JValue::Int(x), JValue::Int(y)])
                .map(drop)
        })
    }

    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), millis: u32) -> Result<(), DeviceError> {
        let millis = i32::try_from(millis).unwrap_or(i32::MAX);
        self.with(|env, d| {
            let args = [from.0, from.1, to.0, to.1, millis].map(JValue::Int);
            env.call_method(d, "swipe", "(IIIII)V", &args).map(drop)
        })
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.with(|env, d| {
            env.call_method(d, "longPress", "(II)V", &[JValue::Int(x), JValue::Int(y)])
                .map(drop)
        })
    }

    fn input_text(&mut self, text: &str) -> Result<(), DeviceError> {
        self.with(|env, d| {
            let s = env.new_string(text)?;
            env.call_method(d, "inputText", "(Ljava/lang/String;)V", &[JValue::Object(&s)])
                .map(drop)
        })
    }

    fn press_key(&mut self, key: KeyCode) -> Result<(), DeviceError> {
        self.with(|env, d| {
            let s = env.new_string(key_name(key))?;
            env.call_method(d, "pressKey", "(Ljava/lang/String;)V", &[JValue::Object(&s)])
                .map(drop)
        })
    }

    fn launch_app(&mut self, app_id: &str, mode: LaunchMode) -> Result<(), DeviceError> {
        self.with(|env, d| {
            let a = env.new_string(app_id)?;
            let m = env.new_string(mode_name(mode))?;
            env.call_method(
                d,
                "launchApp",
                "(Ljava/lang/String;Ljava/lang/String;)V",
                &[JValue::Object(&a), JValue::Object(&m)],
            )
            .map(drop)
        })
    }

    fn screenshot(&mut self) -> Result<Screenshot, DeviceError> {
        let bytes = self.with(|env, d| {
            let v = env.call_method(d, "screenshot", "()[B", &[])?.l()?;
            if v.is_null() {
                return Ok(Vec::new());
            }
            env.convert_byte_array(jni::objects::JByteArray::from(v))
        })?;
        Ok(Screenshot {
            mime: "image/png",
            bytes,
        })
    }
}
