//! JSON read by name only. serde's derived `Deserialize` for a struct also accepts a JSON
//! array, reading the fields by position, so `[1, "hello", true, "user"]` would pass for a
//! record. Formats that say "object" mean object: [`from_str`] refuses an array wherever a
//! struct is expected, at any depth.
//!
//! It parses into a [`serde_json::Value`] walked by a deserializer that refuses sequences for
//! structs; on any other mismatch it parses again straight into `T`, so that the message keeps
//! serde_json's line and column.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Value};

/// `serde_json::from_str`, with structs read from objects only.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    let value: Value = serde_json::from_str(text)?;
    match T::deserialize(Strict(&value)) {
        Ok(v) => Ok(v),
        Err(e) if e.to_string().contains(POSITIONAL) => Err(e),
        // Any other mismatch: serde_json's own message, which says where.
        Err(e) => Err(serde_json::from_str::<T>(text).err().unwrap_or(e)),
    }
}

const POSITIONAL: &str = "fields are read by name, not by position";

/// A JSON value that deserialises like `serde_json::Value`, except that a struct never reads
/// an array.
#[derive(Clone, Copy)]
struct Strict<'a>(&'a Value);

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

impl<'de> de::Deserializer<'de> for Strict<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(a) => visitor.visit_seq(Seq(a.iter())),
            Value::Object(m) => visitor.visit_map(Map {
                iter: m.iter(),
                value: None,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if let Value::Array(_) = self.0 {
            return Err(de::Error::custom(format!(
                "expected a JSON object with named fields ({}), found an array: {POSITIONAL}",
                fields.join(", ")
            )));
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            // Data-carrying variants: serde_json's own reading (no format here nests a struct
            // inside one).
            Value::Object(_) => self.0.clone().deserialize_enum(name, variants, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(other),
                &"a variant name",
            )),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

struct Seq<'a>(std::slice::Iter<'a, Value>);

impl<'de> de::SeqAccess<'de> for Seq<'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Strict(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Map<'a> {
    iter: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'de> de::MapAccess<'de> for Map<'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            None => Ok(None),
            Some((k, v)) => {
                self.value = Some(v);
                let key: de::value::BorrowedStrDeserializer<'de, Error> =
                    de::value::BorrowedStrDeserializer::new(k);
                seed.deserialize(key).map(Some)
            }
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let v = self
            .value
            .take()
            .ok_or_else(|| <Error as de::Error>::custom("a value without its key"))?;
        seed.deserialize(Strict(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Inner {
        a: u64,
        #[serde(default)]
        b: Option<String>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Role {
        User,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Outer {
        role: Role,
        inner: Vec<Inner>,
        #[serde(default)]
        any: Value,
    }

    #[test]
    fn objects_are_read_arrays_refused_at_any_depth() {
        let ok: Outer =
            from_str(r#"{"role":"user","inner":[{"a":1,"b":"x"}],"any":[1,{"k":2}]}"#).unwrap();
        assert_eq!(
            ok.inner[0],
            Inner {
                a: 1,
                b: Some("x".into())
            }
        );
        assert_eq!(ok.any, serde_json::json!([1, {"k": 2}]));
        for bad in [r#"["user",[]]"#, r#"{"role":"user","inner":[[1,"x"]]}"#] {
            assert!(
                serde_json::from_str::<Outer>(bad).is_ok(),
                "serde alone accepts {bad}"
            );
            let e = from_str::<Outer>(bad).unwrap_err().to_string();
            assert!(e.contains("found an array: fields are read by name"), "{e}");
        }
        // Ordinary errors keep their position.
        let e = from_str::<Outer>("{\"role\":\"robot\"}").unwrap_err();
        assert_eq!(e.line(), 1);
        assert!(e.column() > 0);
    }
}
