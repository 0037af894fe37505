//! `--json` output: a small JSON value and its serialization (RFC 8259),
//! written here so that the command needs no serialization crate.
//!
//! Objects keep their keys in insertion order, so the output reads in the
//! same order as the human table. Non-finite numbers, which JSON cannot
//! express, become `null`.

use std::fmt::Write as _;

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// An integer, written exactly.
    Int(i128),
    /// A float; `null` when not finite.
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// An empty object, to be filled with [`Json::with`].
    pub(crate) fn object() -> Json {
        Json::Obj(Vec::new())
    }

    /// The object with `key` appended (or replaced, when it is present).
    /// A no-op on anything but an object.
    pub(crate) fn with(mut self, key: &str, value: impl Into<Json>) -> Json {
        self.set(key, value);
        self
    }

    /// Sets `key` on an object (replacing an earlier value of that key).
    pub(crate) fn set(&mut self, key: &str, value: impl Into<Json>) {
        if let Json::Obj(fields) = self {
            let value = value.into();
            match fields.iter_mut().find(|(k, _)| k == key) {
                Some(field) => field.1 = value,
                None => fields.push((key.to_owned(), value)),
            }
        }
    }

    /// The value of `key`, on an object.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value, pretty-printed with two-space indentation.
    pub(crate) fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }

    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Num(x) => write_number(out, *x),
            Json::Str(s) => write_string(out, s),
            Json::Arr(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                    return;
                }
                // Arrays of scalars stay on one line.
                if items
                    .iter()
                    .all(|v| !matches!(v, Json::Arr(_) | Json::Obj(_)))
                {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        item.write(out, indent);
                    }
                    out.push(']');
                    return;
                }
                out.push_str("[\n");
                for (i, item) in items.iter().enumerate() {
                    push_indent(out, indent + 1);
                    item.write(out, indent + 1);
                    if i + 1 < items.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                push_indent(out, indent);
                out.push(']');
            }
            Json::Obj(fields) => {
                if fields.is_empty() {
                    out.push_str("{}");
                    return;
                }
                out.push_str("{\n");
                for (i, (key, value)) in fields.iter().enumerate() {
                    push_indent(out, indent + 1);
                    write_string(out, key);
                    out.push_str(": ");
                    value.write(out, indent + 1);
                    if i + 1 < fields.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                push_indent(out, indent);
                out.push('}');
            }
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str("  ");
    }
}

/// A finite float as JSON: Rust's shortest round-trip form, which is valid
/// JSON except that it may lack a fraction or exponent (`3` is fine too).
fn write_number(out: &mut String, x: f64) {
    if x.is_finite() {
        let _ = write!(out, "{x}");
    } else {
        out.push_str("null");
    }
}

/// A string with every character JSON requires escaped: `"`, `\` and the
/// control characters U+0000..U+001F (the short forms where JSON has them).
/// DEL and non-ASCII characters pass through as UTF-8, which JSON allows.
pub(crate) fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_owned())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Str(s)
    }
}

impl From<&String> for Json {
    fn from(s: &String) -> Json {
        Json::Str(s.clone())
    }
}

impl From<f64> for Json {
    fn from(x: f64) -> Json {
        Json::Num(x)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => { $(
        impl From<$t> for Json {
            fn from(i: $t) -> Json {
                Json::Int(i128::from(i))
            }
        }
    )* };
}
from_int!(i32, i64, u8, u32, u64);

impl From<usize> for Json {
    fn from(i: usize) -> Json {
        // usize is at most 64 bits on every supported target.
        Json::Int(i as i128)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Json {
        v.map_or(Json::Null, Into::into)
    }
}

impl<T: Into<Json>> From<Vec<T>> for Json {
    fn from(v: Vec<T>) -> Json {
        Json::Arr(v.into_iter().map(Into::into).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str) -> String {
        let mut out = String::new();
        write_string(&mut out, s);
        out
    }

    #[test]
    fn strings_escape_what_json_requires() {
        assert_eq!(string("plain"), r#""plain""#);
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string("l1\nl2\r\t"), r#""l1\nl2\r\t""#);
        assert_eq!(string("\u{08}\u{0c}"), r#""\b\f""#);
        assert_eq!(string("\u{00}\u{1f}"), r#""\u0000\u001f""#);
        assert_eq!(string("sm_90 → µs \u{7f}"), "\"sm_90 → µs \u{7f}\"");
        // A Windows path and a C++ name expression.
        assert_eq!(string(r"C:\k.cu"), r#""C:\\k.cu""#);
        assert_eq!(string("k<float>"), r#""k<float>""#);
    }

    #[test]
    fn values_serialize_in_insertion_order() {
        let v = Json::object()
            .with("b", 1u32)
            .with("a", "x")
            .with("n", Json::Null)
            .with("f", 0.5)
            .with("nan", f64::NAN)
            .with("list", vec![1u32, 2])
            .with("empty", Json::Arr(Vec::new()))
            .with("nested", Json::object().with("ok", true))
            .with("b", 2u32);
        assert_eq!(
            v.to_pretty(),
            "{\n  \"b\": 2,\n  \"a\": \"x\",\n  \"n\": null,\n  \"f\": 0.5,\n  \"nan\": null,\n  \
             \"list\": [1, 2],\n  \"empty\": [],\n  \"nested\": {\n    \"ok\": true\n  }\n}"
        );
        assert_eq!(v.get("a"), Some(&Json::Str("x".into())));
        let objects = Json::Arr(vec![Json::object().with("x", 1u32), Json::object()]);
        assert_eq!(objects.to_pretty(), "[\n  {\n    \"x\": 1\n  },\n  {}\n]");
        assert_eq!(Json::from(u64::MAX).to_pretty(), "18446744073709551615");
        assert_eq!(Json::from(-3i64).to_pretty(), "-3");
        assert_eq!(Json::from(1e300).to_pretty(), format!("{}", 1e300));
    }
}
