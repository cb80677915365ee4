//! Bytes across the boundary: [`TbBuf`] carries what the library hands out (JSON, a message),
//! [`TbSink`] what an embedder's callback hands in. Each side allocates and frees its own memory.

use std::ptr;

use crate::{FfiError, TbStatus};

/// Bytes the library allocated: UTF-8 JSON or an error message, `len` bytes, followed by a NUL
/// that `len` does not count (so C may print it). Free with [`tb_buf_free`]; an empty buffer has
/// a null `ptr`.
#[repr(C)]
pub struct TbBuf {
    pub ptr: *mut u8,
    pub len: usize,
}

impl TbBuf {
    pub(crate) fn empty() -> TbBuf {
        TbBuf {
            ptr: ptr::null_mut(),
            len: 0,
        }
    }

    fn from_string(s: String) -> TbBuf {
        if s.is_empty() {
            return TbBuf::empty();
        }
        let len = s.len();
        let mut bytes = s.into_bytes();
        bytes.push(0);
        let boxed = bytes.into_boxed_slice();
        TbBuf {
            ptr: Box::into_raw(boxed).cast::<u8>(),
            len,
        }
    }
}

/// Frees a buffer the library filled and sets it empty, so freeing it twice does nothing.
///
/// # Safety
/// `buf` is null or points to a `TbBuf` that the library filled (or that is empty).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_buf_free(buf: *mut TbBuf) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the caller passes null or a valid TbBuf.
        let Some(buf) = (unsafe { buf.as_mut() }) else { return };
        if !buf.ptr.is_null() {
            // SAFETY: ptr/len+1 came from `from_string`'s boxed slice.
            drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(buf.ptr, buf.len + 1)) });
        }
        *buf = TbBuf::empty();
    });
}

/// Writes `text` into `out` (when given), replacing and freeing what it held.
pub(crate) fn put(out: *mut TbBuf, text: String) {
    // SAFETY: every entry point documents `out` as null or a valid TbBuf.
    if let Some(out) = unsafe { out.as_mut() } {
        unsafe { tb_buf_free(out) };
        *out = TbBuf::from_string(text);
    }
}

/// Finishes an entry point: the value's text into `out` on success, the message on an error.
pub(crate) fn finish(out: *mut TbBuf, r: Result<String, FfiError>) -> TbStatus {
    match r {
        Ok(text) => {
            put(out, text);
            TbStatus::Ok
        }
        Err(e) => {
            put(out, e.message);
            e.status
        }
    }
}

/// Where an embedder's callback writes its answer (a JSON view tree, a screenshot, a message).
pub struct TbSink {
    pub(crate) bytes: Vec<u8>,
}

/// Appends `len` bytes at `ptr` to `sink`. Returns `BadInput` for a null sink, or a null `ptr`
/// with a non-zero `len`.
///
/// # Safety
/// `sink` is the pointer a callback was given, used only during that callback; `ptr` points to
/// `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_sink_write(sink: *mut TbSink, ptr: *const u8, len: usize) -> TbStatus {
    std::panic::catch_unwind(|| {
        // SAFETY: per the contract above.
        let Some(sink) = (unsafe { sink.as_mut() }) else {
            return TbStatus::BadInput;
        };
        if len == 0 {
            return TbStatus::Ok;
        }
        if ptr.is_null() {
            return TbStatus::BadInput;
        }
        sink.bytes
            .extend_from_slice(unsafe { std::slice::from_raw_parts(ptr, len) });
        TbStatus::Ok
    })
    .unwrap_or(TbStatus::Panic)
}

/// The UTF-8 text at `ptr`/`len`; `what` names the argument in the error.
pub(crate) fn text<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a str, FfiError> {
    if ptr.is_null() {
        if len == 0 {
            return Ok("");
        }
        return Err(FfiError::new(TbStatus::BadInput, format!("{what}: a null pointer")));
    }
    // SAFETY: the caller promises `len` readable bytes at `ptr` for the call's duration.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    std::str::from_utf8(bytes).map_err(|e| {
        FfiError::new(
            TbStatus::BadInput,
            format!("{what}: not UTF-8 at byte {}", e.valid_up_to()),
        )
    })
}

/// The JSON at `ptr`/`len` (empty text reads as `default`).
pub(crate) fn json(
    ptr: *const u8,
    len: usize,
    what: &str,
    default: serde_json::Value,
) -> Result<serde_json::Value, FfiError> {
    let t = text(ptr, len, what)?;
    if t.trim().is_empty() {
        return Ok(default);
    }
    // serde_json's message names line and column, never the offending value.
    serde_json::from_str(t).map_err(|e| FfiError::new(TbStatus::BadInput, format!("{what}: invalid JSON: {e}")))
}
