//! A serde `Serializer` that builds a QuickJS value: a host function's result goes straight into the
//! script's object. It makes what `serde_json::to_value` and then the JSON-to-script conversion
//! would: integers within 32 bits as ints, other numbers as doubles, NaN and Infinity as `null`,
//! `None` and `()` as `null`, enums externally tagged, map keys as strings.

use rquickjs::{Array, Ctx, Object, Value};
use serde::ser::{self, Serialize};

use super::object::define;

/// Why a result could not be built: the caller reports the Rust type, never this text (it may
/// quote part of the result).
#[derive(Debug)]
pub struct SerError(String);

impl std::fmt::Display for SerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerError {}

impl ser::Error for SerError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerError(msg.to_string())
    }
}

impl From<rquickjs::Error> for SerError {
    fn from(e: rquickjs::Error) -> Self {
        SerError(e.to_string())
    }
}

type R<'js> = Result<Value<'js>, SerError>;

/// Serializes `value` into a new script value.
pub fn to_js<'js, T: Serialize + ?Sized>(ctx: &Ctx<'js>, value: &T) -> R<'js> {
    value.serialize(JsSer { ctx })
}

#[derive(Clone, Copy)]
pub struct JsSer<'a, 'js> {
    ctx: &'a Ctx<'js>,
}

impl<'a, 'js> JsSer<'a, 'js> {
    fn number(self, f: f64) -> R<'js> {
        if f.is_finite() {
            Ok(Value::new_number(self.ctx.clone(), f))
        } else {
            Ok(Value::new_null(self.ctx.clone()))
        }
    }

    fn int(self, i: i64) -> R<'js> {
        Ok(match i32::try_from(i) {
            Ok(i) => Value::new_int(self.ctx.clone(), i),
            Err(_) => Value::new_number(self.ctx.clone(), i as f64),
        })
    }

    fn string(self, s: &str) -> R<'js> {
        Ok(rquickjs::String::from_str(self.ctx.clone(), s)?.into_value())
    }

    /// `{variant: inner}`, an externally tagged enum value.
    fn tagged(self, variant: &str, inner: Value<'js>) -> R<'js> {
        let obj = Object::new(self.ctx.clone())?;
        define(&obj, variant, inner)?;
        Ok(obj.into_value())
    }
}

impl<'a, 'js> ser::Serializer for JsSer<'a, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    type SerializeSeq = Items<'a, 'js>;
    type SerializeTuple = Items<'a, 'js>;
    type SerializeTupleStruct = Items<'a, 'js>;
    type SerializeTupleVariant = Items<'a, 'js>;
    type SerializeMap = Members<'a, 'js>;
    type SerializeStruct = Members<'a, 'js>;
    type SerializeStructVariant = Members<'a, 'js>;

    fn serialize_bool(self, v: bool) -> R<'js> {
        Ok(Value::new_bool(self.ctx.clone(), v))
    }
    fn serialize_i8(self, v: i8) -> R<'js> {
        self.int(v.into())
    }
    fn serialize_i16(self, v: i16) -> R<'js> {
        self.int(v.into())
    }
    fn serialize_i32(self, v: i32) -> R<'js> {
        self.int(v.into())
    }
    fn serialize_i64(self, v: i64) -> R<'js> {
        self.int(v)
    }
    fn serialize_u8(self, v: u8) -> R<'js> {
        self.int(v.into())
    }
    fn serialize_u16(self, v: u16) -> R<'js> {
        self.int(v.into())
    }
    fn serialize_u32(self, v: u32) -> R<'js> {
        self.int(v.into())
    }
    fn serialize_u64(self, v: u64) -> R<'js> {
        match i64::try_from(v) {
            Ok(i) => self.int(i),
            Err(_) => self.number(v as f64),
        }
    }
    fn serialize_f32(self, v: f32) -> R<'js> {
        self.number(v.into())
    }
    fn serialize_f64(self, v: f64) -> R<'js> {
        self.number(v)
    }
    fn serialize_char(self, v: char) -> R<'js> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> R<'js> {
        self.string(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> R<'js> {
        let arr = Array::new(self.ctx.clone())?;
        for (i, b) in v.iter().enumerate() {
            arr.set(i, i32::from(*b))?;
        }
        Ok(arr.into_value())
    }
    fn serialize_none(self) -> R<'js> {
        Ok(Value::new_null(self.ctx.clone()))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> R<'js> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R<'js> {
        Ok(Value::new_null(self.ctx.clone()))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> R<'js> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> R<'js> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> R<'js> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> R<'js> {
        let inner = value.serialize(self)?;
        self.tagged(variant, inner)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Items<'a, 'js>, SerError> {
        Ok(Items {
            ser: self,
            arr: Array::new(self.ctx.clone())?,
            next: 0,
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Items<'a, 'js>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Items<'a, 'js>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Items<'a, 'js>, SerError> {
        let mut items = self.serialize_seq(Some(len))?;
        items.variant = Some(variant);
        Ok(items)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Members<'a, 'js>, SerError> {
        Ok(Members {
            ser: self,
            obj: Object::new(self.ctx.clone())?,
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Members<'a, 'js>, SerError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Members<'a, 'js>, SerError> {
        let mut members = self.serialize_map(Some(len))?;
        members.variant = Some(variant);
        Ok(members)
    }
}

/// An array being built (a sequence, a tuple, or a tuple variant's items).
pub struct Items<'a, 'js> {
    ser: JsSer<'a, 'js>,
    arr: Array<'js>,
    next: usize,
    variant: Option<&'static str>,
}

impl<'js> Items<'_, 'js> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let v = value.serialize(self.ser)?;
        self.arr.set(self.next, v)?;
        self.next += 1;
        Ok(())
    }
    fn finish(self) -> R<'js> {
        match self.variant {
            Some(variant) => self.ser.tagged(variant, self.arr.into_value()),
            None => Ok(self.arr.into_value()),
        }
    }
}

impl<'js> ser::SerializeSeq for Items<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

impl<'js> ser::SerializeTuple for Items<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

impl<'js> ser::SerializeTupleStruct for Items<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

impl<'js> ser::SerializeTupleVariant for Items<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        self.push(value)
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

/// An object being built (a map, a struct, or a struct variant's members).
pub struct Members<'a, 'js> {
    ser: JsSer<'a, 'js>,
    obj: Object<'js>,
    key: Option<String>,
    variant: Option<&'static str>,
}

impl<'js> Members<'_, 'js> {
    fn finish(self) -> R<'js> {
        match self.variant {
            Some(variant) => self.ser.tagged(variant, self.obj.into_value()),
            None => Ok(self.obj.into_value()),
        }
    }
}

impl<'js> ser::SerializeMap for Members<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        key.serialize(KeySer(|k: &str| {
            self.key = Some(k.to_string());
            Ok(())
        }))
    }
    /// A whole entry (what maps serialize): the value first, then the member defined under the
    /// key's text where it lies, with no `String` made for it.
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), SerError> {
        let v = value.serialize(self.ser)?;
        let obj = &self.obj;
        key.serialize(KeySer(|k: &str| Ok(define(obj, k, v)?)))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerError> {
        let key = self
            .key
            .take()
            .ok_or_else(|| SerError("a map value without a key".into()))?;
        let v = value.serialize(self.ser)?;
        define(&self.obj, &key, v)?;
        Ok(())
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

impl<'js> ser::SerializeStruct for Members<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), SerError> {
        let v = value.serialize(self.ser)?;
        define(&self.obj, key, v)?;
        Ok(())
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

impl<'js> ser::SerializeStructVariant for Members<'_, 'js> {
    type Ok = Value<'js>;
    type Error = SerError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), SerError> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> R<'js> {
        self.finish()
    }
}

/// The `serialize_*` methods of key types written as their text (`1` → `"1"`, as serde_json does).
macro_rules! as_text_keys {
    ($($method:ident: $t:ty),* $(,)?) => {
        $(fn $method(self, v: $t) -> Result<(), SerError> {
            (self.0)(&v.to_string())
        })*
    };
}
/// A map key: strings as they are, numbers and booleans as their text (as serde_json does), handed
/// to the closure (a string key is not copied).
struct KeySer<F>(F);

impl<F: FnOnce(&str) -> Result<(), SerError>> ser::Serializer for KeySer<F> {
    type Ok = ();
    type Error = SerError;
    type SerializeSeq = ser::Impossible<(), SerError>;
    type SerializeTuple = ser::Impossible<(), SerError>;
    type SerializeTupleStruct = ser::Impossible<(), SerError>;
    type SerializeTupleVariant = ser::Impossible<(), SerError>;
    type SerializeMap = ser::Impossible<(), SerError>;
    type SerializeStruct = ser::Impossible<(), SerError>;
    type SerializeStructVariant = ser::Impossible<(), SerError>;

    fn serialize_str(self, v: &str) -> Result<(), SerError> {
        (self.0)(v)
    }
    as_text_keys!(
        serialize_char: char, serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
    );
    fn serialize_f32(self, _v: f32) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_f64(self, _v: f64) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_none(self) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_unit(self) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<(), SerError> {
        (self.0)(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<(), SerError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), SerError> {
        Err(key_must_be_text())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, SerError> {
        Err(key_must_be_text())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, SerError> {
        Err(key_must_be_text())
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct, SerError> {
        Err(key_must_be_text())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, SerError> {
        Err(key_must_be_text())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, SerError> {
        Err(key_must_be_text())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct, SerError> {
        Err(key_must_be_text())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, SerError> {
        Err(key_must_be_text())
    }
}

fn key_must_be_text() -> SerError {
    SerError("a map key must be a string, an integer or a boolean".into())
}
