//! A serde `Deserializer` over a QuickJS value, generic over its error type (as `value_de` is over
//! JSON): a host function's arguments decode straight from the script's object. It reads what
//! `JSON.stringify` would keep — `undefined` and function members are skipped, array holes are
//! `null`, integral numbers are integers — so a call decodes as it would through JSON. Depth and the
//! number of values read are bounded: a cycle or a sparse array is refused, not walked forever.

use std::cell::Cell;
use std::marker::PhantomData;

use rquickjs::{Array, Object, Type, Value};
use serde::de::value::{StrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Unexpected, Visitor};

use super::object::{Held, Members, kind};

/// Objects nested deeper than this are refused: it also stops cycles.
pub const MAX_DEPTH: usize = 128;
/// Values (every array item, member and scalar) one decoding may read.
pub const MAX_VALUES: usize = 200_000;

/// What is left of one decoding's budget, shared by every level of it.
pub struct Budget {
    values: Cell<usize>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            values: Cell::new(MAX_VALUES),
        }
    }
}

impl Budget {
    fn take<E: de::Error>(&self, n: usize) -> Result<(), E> {
        match self.values.get().checked_sub(n) {
            Some(left) => {
                self.values.set(left);
                Ok(())
            }
            None => Err(E::custom(format!(
                "more than {MAX_VALUES} values (a sparse array, references shared many times, or simply too much)"
            ))),
        }
    }
}

pub struct JsDe<'a, 'v, 'js, E> {
    value: Held<'v, 'js>,
    at: Level<'a, E>,
}

/// Where a value is: its depth, and the budget of the whole decoding.
struct Level<'a, E> {
    depth: usize,
    budget: &'a Budget,
    error: PhantomData<E>,
}

impl<E> Clone for Level<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E> Copy for Level<'_, E> {}

impl<'a, E: de::Error> Level<'a, E> {
    /// A member or item of the value at this level.
    fn child<'js>(self, value: Value<'js>) -> Result<JsDe<'a, 'js, 'js, E>, E> {
        if self.depth >= MAX_DEPTH {
            return Err(E::custom(format!(
                "a value nested deeper than {MAX_DEPTH} levels (a cycle?)"
            )));
        }
        Ok(JsDe {
            value: Held::Own(value),
            at: Level {
                depth: self.depth + 1,
                ..self
            },
        })
    }
}

impl<'a, 'v, 'js, E: de::Error> JsDe<'a, 'v, 'js, E> {
    /// Decodes `value` where it is (lent: the caller keeps it).
    pub fn new(value: &'v Value<'js>, budget: &'a Budget) -> Self {
        JsDe {
            value: Held::Lent(value),
            at: Level {
                depth: 0,
                budget,
                error: PhantomData,
            },
        }
    }

    /// The kind of value, for a type error (never the value itself).
    fn unexpected(&self) -> Unexpected<'static> {
        match kind(&self.value) {
            Type::Undefined | Type::Null | Type::Uninitialized => Unexpected::Unit,
            Type::Bool => Unexpected::Bool(false),
            Type::Int => Unexpected::Signed(0),
            Type::Float => match number(&self.value) {
                Number::Int(_) => Unexpected::Signed(0),
                _ => Unexpected::Float(0.0),
            },
            Type::String => Unexpected::Str(""),
            Type::Array => Unexpected::Seq,
            _ => Unexpected::Map,
        }
    }
}

enum Number {
    Int(i64),
    Float(f64),
    NotFinite,
}

fn number(v: &Value<'_>) -> Number {
    let f = v.as_float().unwrap_or_default();
    // Integral floats are integers, so `3` from a script decodes into an integer field (as JSON would).
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        Number::Int(f as i64)
    } else if f.is_finite() {
        Number::Float(f)
    } else {
        Number::NotFinite
    }
}

fn js<T, E: de::Error>(r: rquickjs::Result<T>) -> Result<T, E> {
    r.map_err(|e| E::custom(e))
}

/// Whether a member with this value is left out, as `JSON.stringify` leaves it out.
fn skipped(v: &Value<'_>) -> bool {
    matches!(kind(v), Type::Undefined | Type::Function | Type::Constructor)
}

impl<'de, 'js, E: de::Error> Deserializer<'de> for JsDe<'_, '_, 'js, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        self.at.budget.take::<E>(1)?;
        match kind(&self.value) {
            Type::Undefined | Type::Null | Type::Uninitialized => visitor.visit_unit(),
            Type::Bool => visitor.visit_bool(self.value.as_bool().unwrap_or_default()),
            Type::Int => visitor.visit_i64(i64::from(self.value.as_int().unwrap_or_default())),
            Type::Float => match number(&self.value) {
                Number::Int(i) => visitor.visit_i64(i),
                Number::Float(f) => visitor.visit_f64(f),
                Number::NotFinite => Err(E::custom("NaN or Infinity cannot cross to the host")),
            },
            Type::String => {
                // SAFETY: `kind` read the string tag (`as_string` would ask `type_of` again).
                match unsafe { self.value.ref_string() }.to_string() {
                    Ok(s) => visitor.visit_string(s),
                    Err(_) => Err(E::custom("a string that is not valid text")),
                }
            }
            Type::Array => {
                // SAFETY: `kind` found an array (`as_array` would ask an object six questions again).
                let arr = unsafe { self.value.ref_array() }.clone();
                // The length first: a sparse array's holes cost nothing in JS and one value each here.
                self.at.budget.take::<E>(arr.len())?;
                visitor.visit_seq(Seq {
                    len: arr.len(),
                    arr,
                    next: 0,
                    at: self.at,
                })
            }
            Type::Object | Type::Exception => {
                // The value moves into its members' reader (no second reference to take and drop).
                let mut entries = Entries {
                    members: js::<_, E>(Members::new(self.value))?,
                    value: None,
                    at: self.at,
                };
                visitor.visit_map(&mut entries)
            }
            other => Err(E::custom(format!(
                "a value of type {} cannot cross to the host",
                other.as_str()
            ))),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match kind(&self.value) {
            Type::Undefined | Type::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, E> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        self.at.budget.take::<E>(1)?;
        if let Some(s) = self.value.as_string() {
            let s = js::<_, E>(s.to_string())?;
            return visitor.visit_enum(IntoDeserializer::<E>::into_deserializer(s));
        }
        if let Some(obj) = self.value.as_object().filter(|_| !self.value.is_array()) {
            // `{variant: value}`: exactly one member JSON would keep.
            let mut members = js::<_, E>(Members::new(obj.as_value()))?;
            let (mut only, mut more) = (None, false);
            while let Some(member) = members.next(|key, v| (!skipped(&v)).then(|| (key.to_owned_string(), v))) {
                let Some(kept) = js::<_, E>(member)? else { continue };
                more = only.is_some();
                if more {
                    break;
                }
                only = Some(kept);
            }
            if let (Some((variant, value)), false) = (only, more) {
                let variant = variant.ok_or_else(|| E::custom("a key that is not valid text"))?;
                let value = self.at.child(value)?;
                return visitor.visit_enum(Variant { variant, value });
            }
        }
        Err(E::invalid_type(self.unexpected(), &"an enum"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct
        seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Seq<'a, 'js, E> {
    arr: Array<'js>,
    len: usize,
    next: usize,
    at: Level<'a, E>,
}

impl<'de, 'js, E: de::Error> SeqAccess<'de> for Seq<'_, 'js, E> {
    type Error = E;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, E> {
        if self.next >= self.len {
            return Ok(None);
        }
        let item: Value = js::<_, E>(self.arr.get(self.next))?;
        self.next += 1;
        seed.deserialize(self.at.child(item)?).map(Some)
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.len - self.next)
    }
}

struct Entries<'a, 'v, 'js, E> {
    members: Members<'v, 'js>,
    value: Option<Value<'js>>,
    at: Level<'a, E>,
}

impl<'de, 'js, E: de::Error> MapAccess<'de> for &mut Entries<'_, '_, 'js, E> {
    type Error = E;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, E> {
        let mut seed = Some(seed);
        let value = &mut self.value;
        while let Some(member) = self.members.next(|key, v| {
            if skipped(&v) {
                return None;
            }
            *value = Some(v);
            let seed = seed.take()?;
            Some(
                key.with_str(|k| seed.deserialize(StrDeserializer::<E>::new(k)))
                    .unwrap_or_else(|| Err(E::custom("a key that is not valid text"))),
            )
        }) {
            if let Some(key) = js::<_, E>(member)? {
                return key.map(Some);
            }
        }
        Ok(None)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, E> {
        match self.value.take() {
            Some(v) => seed.deserialize(self.at.child(v)?),
            None => Err(E::custom("a value without a key")),
        }
    }
}

/// An externally tagged enum value `{variant: value}`.
struct Variant<'a, 'js, E> {
    variant: String,
    value: JsDe<'a, 'js, 'js, E>,
}

impl<'de, 'a, 'js, E: de::Error> de::EnumAccess<'de> for Variant<'a, 'js, E> {
    type Error = E;
    type Variant = JsDe<'a, 'js, 'js, E>;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant), E> {
        let v = seed.deserialize(StringDeserializer::<E>::new(self.variant))?;
        Ok((v, self.value))
    }
}

impl<'de, 'js, E: de::Error> de::VariantAccess<'de> for JsDe<'_, '_, 'js, E> {
    type Error = E;
    fn unit_variant(self) -> Result<(), E> {
        match kind(&self.value) {
            Type::Null => Ok(()),
            _ => Err(E::invalid_type(self.unexpected(), &"nothing")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, E> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, E> {
        self.deserialize_seq(visitor)
    }
    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], visitor: V) -> Result<V::Value, E> {
        self.deserialize_map(visitor)
    }
}

/// An empty object, for a call made with no arguments (`ctx.host.now()`), which decodes as `{}`.
pub fn empty<'js>(ctx: &rquickjs::Ctx<'js>) -> rquickjs::Result<Value<'js>> {
    Ok(Object::new(ctx.clone())?.into_value())
}
