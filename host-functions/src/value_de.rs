//! A serde `Deserializer` over a borrowed `serde_json::Value`, generic over its error type. serde_json's
//! own one fixes the error to `serde_json::Error`, whose messages quote values; `decode` needs its own
//! error type, and walking the borrowed tree directly avoids building a second tree per call.

use std::marker::PhantomData;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use serde_json::{Map, Value};

pub struct ValueDe<'de, E> {
    value: &'de Value,
    error: PhantomData<E>,
}

impl<'de, E> ValueDe<'de, E> {
    pub fn new(value: &'de Value) -> Self {
        ValueDe {
            value,
            error: PhantomData,
        }
    }
}

fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (_, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

impl<'de, E: de::Error> Deserializer<'de> for ValueDe<'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (_, Some(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f64(n.as_f64().unwrap_or_default()),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(Seq {
                items: items.iter(),
                error: PhantomData,
            }),
            Value::Object(map) => visitor.visit_map(Entries {
                iter: map.iter(),
                value: None,
                error: PhantomData,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.value {
            Value::Null => visitor.visit_none(),
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
        match self.value {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            Value::Object(map) if map.len() == 1 => match map.iter().next() {
                Some((variant, value)) => visitor.visit_enum(Variant {
                    variant,
                    value,
                    error: PhantomData,
                }),
                None => Err(E::invalid_type(Unexpected::Map, &"an enum")),
            },
            other => Err(E::invalid_type(unexpected(other), &"an enum")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit unit_struct
        seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Seq<'de, E> {
    items: std::slice::Iter<'de, Value>,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> SeqAccess<'de> for Seq<'de, E> {
    type Error = E;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, E> {
        self.items.next().map(|v| seed.deserialize(ValueDe::new(v))).transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries<'de, E> {
    iter: <&'de Map<String, Value> as IntoIterator>::IntoIter,
    value: Option<&'de Value>,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> MapAccess<'de> for Entries<'de, E> {
    type Error = E;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, E> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(BorrowedStrDeserializer::new(k)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, E> {
        match self.value.take() {
            Some(v) => seed.deserialize(ValueDe::new(v)),
            None => Err(E::custom("a value without a key")),
        }
    }
}

/// An externally tagged enum value `{variant: value}`.
struct Variant<'de, E> {
    variant: &'de str,
    value: &'de Value,
    error: PhantomData<E>,
}

impl<'de, E: de::Error> de::EnumAccess<'de> for Variant<'de, E> {
    type Error = E;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), E> {
        let v = seed.deserialize(BorrowedStrDeserializer::<E>::new(self.variant))?;
        Ok((v, self))
    }
}

impl<'de, E: de::Error> de::VariantAccess<'de> for Variant<'de, E> {
    type Error = E;
    fn unit_variant(self) -> Result<(), E> {
        match self.value {
            Value::Null => Ok(()),
            other => Err(E::invalid_type(unexpected(other), &"nothing")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, E> {
        seed.deserialize(ValueDe::new(self.value))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, E> {
        ValueDe::<E>::new(self.value).deserialize_seq(visitor)
    }
    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], visitor: V) -> Result<V::Value, E> {
        ValueDe::<E>::new(self.value).deserialize_map(visitor)
    }
}
