//! The syntax errors Go's `encoding/json` reports for a malformed body, with its wording:
//! the real server quotes them in its 400s (`invalid character 'x' looking for beginning
//! of value`, `unexpected end of JSON input`, ...).
//!
//! The checker ([`syntax_error`]) keeps no recursion on the stack; bodies it accepts are
//! parsed by `serde_json` ([`parse`]), which builds values at most [`FAKE_MAX_DEPTH`] deep.
//! Between that and Go's 10,000 levels the fake refuses what kube-apiserver would read
//! ([`Unread::Deep`]): every walk over a stored object (validation, patches, managed
//! fields, encoding) recurses, and a 2 MiB worker stack holds a few hundred levels of them.

use serde_json::Value;

/// How deep arrays and objects may nest before Go's scanner gives up.
const MAX_DEPTH: usize = 10_000;

/// How deep arrays and objects may nest in a value the fake builds (`serde_json`'s limit).
pub(crate) const FAKE_MAX_DEPTH: usize = 127;

/// Why a JSON body was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unread {
    /// Go's scanner refuses it, with this message (nesting past 10,000 levels included).
    Syntax(String),
    /// Valid JSON nested deeper than [`FAKE_MAX_DEPTH`]: kube-apiserver would read it, the
    /// fake does not. The Go type of the top-level value, for the errors that need only it.
    Deep(&'static str),
    /// Valid for Go's scanner, not for `serde_json` (a number out of range): its message.
    Other(String),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Syntax(why) | Self::Other(why) => f.write_str(why),
            Self::Deep(_) => write!(
                f,
                "nested more than {FAKE_MAX_DEPTH} deep, which the fake API server does not read (kube-apiserver reads up to {MAX_DEPTH})"
            ),
        }
    }
}

/// `data` as a JSON value, or why not: Go's syntax error first, as the real server's
/// decoders scan before they decode.
pub(crate) fn parse(data: &[u8]) -> Result<Value, Unread> {
    serde_json::from_slice(data).or_else(|e| {
        if let Some(why) = syntax_error(data) {
            return Err(Unread::Syntax(why));
        }
        if e.to_string().starts_with("recursion limit exceeded") {
            return Err(Unread::Deep(top_level_type(data)));
        }
        // Go reads invalid UTF-8 and unpaired surrogate escapes in strings as U+FFFD.
        go_strings(data)
            .and_then(|text| serde_json::from_str(&text).ok())
            .ok_or_else(|| Unread::Other(e.to_string()))
    })
}

/// `data` with what Go's decoder reads as U+FFFD written so: invalid UTF-8 bytes, and
/// `\uXXXX` escapes of a surrogate that is not half of a pair; `None` when it has neither.
fn go_strings(data: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(data);
    let mut changed = matches!(text, std::borrow::Cow::Owned(_));
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let surrogate = |at: usize| -> Option<u32> {
        if chars.get(at) != Some(&'\\') || chars.get(at + 1) != Some(&'u') {
            return None;
        }
        let hex: String = chars.get(at + 2..at + 6)?.iter().collect();
        u32::from_str_radix(&hex, 16)
            .ok()
            .filter(|c| (0xD800..0xE000).contains(c))
    };
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        match surrogate(i) {
            Some(high) if (0xD800..0xDC00).contains(&high) => {
                let low = surrogate(i + 6).filter(|c| (0xDC00..0xE000).contains(c));
                if low.is_some() {
                    out.extend(&chars[i..i + 12]);
                    i += 12;
                } else {
                    out.push_str("\\ufffd");
                    changed = true;
                    i += 6;
                }
            }
            Some(_) => {
                out.push_str("\\ufffd");
                changed = true;
                i += 6;
            }
            None => {
                // Any other escape, kept as it is (with the character it escapes).
                out.push('\\');
                if let Some(c) = chars.get(i + 1) {
                    out.push(*c);
                }
                i += 2;
            }
        }
    }
    changed.then_some(out)
}

/// The Go name of the type of a JSON value, as `encoding/json` reports it in "cannot
/// unmarshal ..." (`null` decodes into anything, so it is never reported).
pub(crate) fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Object(_) | Value::Null => "object",
    }
}

/// [`go_type`] of the value `data` starts with, read from its first byte.
fn top_level_type(data: &[u8]) -> &'static str {
    match data
        .iter()
        .find(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
    {
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "bool",
        Some(b'-' | b'0'..=b'9') => "number",
        _ => "object",
    }
}

/// Go's message for the first syntax error in `data`, or `None` when Go's scanner accepts it.
///
/// The scanner keeps the open arrays and objects in a list on the heap, as Go's does, so a
/// body nested 100,000 deep costs 100 KB of list, not the worker's stack.
pub(crate) fn syntax_error(data: &[u8]) -> Option<String> {
    let mut s = Scanner { data, at: 0 };
    let result = s.document().and_then(|()| {
        s.skip_space();
        match s.peek() {
            Some(c) => Err(invalid(c, "after top-level value")),
            None => Ok(()),
        }
    });
    result.err()
}

/// An array or object the scanner is inside.
#[derive(Clone, Copy)]
enum Open {
    Array,
    Object,
}

struct Scanner<'a> {
    data: &'a [u8],
    at: usize,
}

const EOF: &str = "unexpected end of JSON input";

fn invalid(c: u8, context: &str) -> String {
    if context.is_empty() {
        format!("invalid character {}", quote_char(c))
    } else {
        format!("invalid character {} {context}", quote_char(c))
    }
}

/// A byte as Go's `quoteChar` shows it: `'x'`, `'\n'`, `'\x01'`, `'é'` (a byte above
/// 0x7f is read as the code point of the same number).
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_owned(),
        b'"' => "'\"'".to_owned(),
        b'\x07' => r"'\a'".to_owned(),
        b'\x08' => r"'\b'".to_owned(),
        b'\x0c' => r"'\f'".to_owned(),
        b'\n' => r"'\n'".to_owned(),
        b'\r' => r"'\r'".to_owned(),
        b'\t' => r"'\t'".to_owned(),
        b'\x0b' => r"'\v'".to_owned(),
        b'\\' => r"'\\'".to_owned(),
        0x00..=0x1f | 0x7f => format!(r"'\x{c:02x}'"),
        0x80..=0x9f | 0xad => format!(r"'\u{c:04x}'"),
        _ => format!("'{}'", char::from(c)),
    }
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.data.get(self.at).copied()
    }

    fn next(&mut self) -> Result<u8, String> {
        let c = self.peek().ok_or(EOF)?;
        self.at += 1;
        Ok(c)
    }

    /// The next byte where the input may not end: Go's scanner reads the end as a space,
    /// which no such place takes, so the error names `' '`.
    fn next_inside(&mut self) -> u8 {
        self.next().unwrap_or(b' ')
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    /// The next non-space byte, taken.
    fn next_token(&mut self) -> Result<u8, String> {
        self.skip_space();
        self.next()
    }

    /// One value with everything nested in it, without recursion: each turn of the outer
    /// loop reads the start of a value, the inner loop what follows a finished one.
    fn document(&mut self) -> Result<(), String> {
        let mut open: Vec<Open> = Vec::new();
        let mut c = self.next_token()?;
        loop {
            match c {
                b'{' | b'[' if open.len() >= MAX_DEPTH => {
                    return Err(invalid(c, "exceeded max depth"));
                }
                b'{' => {
                    let first = self.next_token()?;
                    if first != b'}' {
                        self.key(first)?;
                        open.push(Open::Object);
                        c = self.next_token()?;
                        continue;
                    }
                }
                b'[' => {
                    let first = self.next_token()?;
                    if first != b']' {
                        open.push(Open::Array);
                        c = first;
                        continue;
                    }
                }
                _ => self.scalar(c)?,
            }
            // A value is finished: close what the input closes, up to the next value.
            loop {
                let Some(&inside) = open.last() else {
                    return Ok(());
                };
                match (inside, self.next_token()?) {
                    (Open::Array, b']') | (Open::Object, b'}') => {
                        open.pop();
                    }
                    (Open::Array, b',') => {
                        c = self.next_token()?;
                        break;
                    }
                    (Open::Object, b',') => {
                        let key = self.next_token()?;
                        self.key(key)?;
                        c = self.next_token()?;
                        break;
                    }
                    (Open::Array, other) => return Err(invalid(other, "after array element")),
                    (Open::Object, other) => {
                        return Err(invalid(other, "after object key:value pair"));
                    }
                }
            }
        }
    }

    /// An object key starting at `c`, and its colon.
    fn key(&mut self, c: u8) -> Result<(), String> {
        if c != b'"' {
            return Err(invalid(c, "looking for beginning of object key string"));
        }
        self.string()?;
        match self.next_token()? {
            b':' => Ok(()),
            colon => Err(invalid(colon, "after object key")),
        }
    }

    /// A string, number or literal starting at `c`.
    fn scalar(&mut self, c: u8) -> Result<(), String> {
        match c {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(c),
            b't' => self.literal(b"rue", "true"),
            b'f' => self.literal(b"alse", "false"),
            b'n' => self.literal(b"ull", "null"),
            _ => Err(invalid(c, "looking for beginning of value")),
        }
    }

    fn string(&mut self) -> Result<(), String> {
        loop {
            match self.next()? {
                b'"' => return Ok(()),
                b'\\' => match self.next_inside() {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {}
                    b'u' => {
                        for _ in 0..4 {
                            let h = self.next_inside();
                            if !h.is_ascii_hexdigit() {
                                return Err(invalid(h, r"in \u hexadecimal character escape"));
                            }
                        }
                    }
                    other => return Err(invalid(other, "in string escape code")),
                },
                c if c < 0x20 => return Err(invalid(c, "in string literal")),
                _ => {}
            }
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn number(&mut self, first: u8) -> Result<(), String> {
        let lead = if first == b'-' {
            self.next_inside()
        } else {
            first
        };
        match lead {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            other => return Err(invalid(other, "in numeric literal")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            let d = self.next_inside();
            if !d.is_ascii_digit() {
                return Err(invalid(d, "after decimal point in numeric literal"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            let mut d = self.next_inside();
            if matches!(d, b'+' | b'-') {
                d = self.next_inside();
            }
            if !d.is_ascii_digit() {
                return Err(invalid(d, "in exponent of numeric literal"));
            }
            self.digits();
        }
        Ok(())
    }

    fn literal(&mut self, rest: &[u8], word: &str) -> Result<(), String> {
        for &want in rest {
            let c = self.next_inside();
            if c != want {
                let context = format!("in literal {word} (expecting '{}')", char::from(want));
                return Err(invalid(c, &context));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    /// Each message as Go 1.26's `json.Unmarshal` wrote it for the same input.
    #[test]
    fn messages_are_go_s() {
        let cases: &[(&str, &str)] = &[
            ("{", "unexpected end of JSON input"),
            ("", "unexpected end of JSON input"),
            ("x", "invalid character 'x' looking for beginning of value"),
            ("{\"a\":1}x", "invalid character 'x' after top-level value"),
            (
                "{a:1}",
                "invalid character 'a' looking for beginning of object key string",
            ),
            ("{\"a\" 1}", "invalid character '1' after object key"),
            (
                "{\"a\":1 2}",
                "invalid character '2' after object key:value pair",
            ),
            ("[1 2]", "invalid character '2' after array element"),
            (
                "[1,]",
                "invalid character ']' looking for beginning of value",
            ),
            (
                "{\"a\":1,}",
                "invalid character '}' looking for beginning of object key string",
            ),
            ("\"a\nb\"", "invalid character '\\n' in string literal"),
            ("\"\\x\"", "invalid character 'x' in string escape code"),
            (
                "\"\\u12g4\"",
                "invalid character 'g' in \\u hexadecimal character escape",
            ),
            ("-a", "invalid character 'a' in numeric literal"),
            (
                "1.x",
                "invalid character 'x' after decimal point in numeric literal",
            ),
            (
                "1ex",
                "invalid character 'x' in exponent of numeric literal",
            ),
            ("01", "invalid character '1' after top-level value"),
            (
                "tru",
                "invalid character ' ' in literal true (expecting 'e')",
            ),
            ("[-", "invalid character ' ' in numeric literal"),
            ("\"\\", "invalid character ' ' in string escape code"),
            ("\"abc", "unexpected end of JSON input"),
            (
                "\x01",
                "invalid character '\\x01' looking for beginning of value",
            ),
            (
                "\x7f",
                "invalid character '\\x7f' looking for beginning of value",
            ),
            (
                "\\",
                "invalid character '\\\\' looking for beginning of value",
            ),
            (
                "trux",
                "invalid character 'x' in literal true (expecting 'e')",
            ),
            (
                "nul1",
                "invalid character '1' in literal null (expecting 'l')",
            ),
            (
                "{\"a\":'b'}",
                "invalid character '\\'' looking for beginning of value",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                syntax_error(input.as_bytes()).as_deref(),
                Some(*want),
                "{input:?}"
            );
        }
        let bytes: &[(&[u8], &str)] = &[
            (
                b"\x80",
                "invalid character '\\u0080' looking for beginning of value",
            ),
            (
                b"\xad",
                "invalid character '\\u00ad' looking for beginning of value",
            ),
            (
                b"\xe9",
                "invalid character '\u{e9}' looking for beginning of value",
            ),
        ];
        for (input, want) in bytes {
            assert_eq!(syntax_error(input).as_deref(), Some(*want), "{input:?}");
        }
        for ok in [
            "{}",
            " [1, -0.5e+3, \"\\u00e9\", true, null] ",
            "0",
            "{\"a\":{\"b\":[]}}",
        ] {
            assert_eq!(syntax_error(ok.as_bytes()), None, "{ok:?}");
        }
    }

    /// Go's scanner allows 10,000 levels; deeper is its "exceeded max depth", found without
    /// recursion (a recursive checker overflowed a worker's stack at 4,500 levels).
    #[test]
    fn depth_is_counted_on_the_heap() {
        let arrays = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
        let objects = |d: usize| format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d));
        assert_eq!(syntax_error(arrays(10_000).as_bytes()), None);
        assert_eq!(syntax_error(objects(10_000).as_bytes()), None);
        let refused = "invalid character '[' exceeded max depth";
        assert_eq!(
            syntax_error(arrays(10_001).as_bytes()).as_deref(),
            Some(refused)
        );
        assert_eq!(
            syntax_error(arrays(1_000_000).as_bytes()).as_deref(),
            Some(refused)
        );
        assert_eq!(
            syntax_error(objects(10_001).as_bytes()).as_deref(),
            Some("invalid character '{' exceeded max depth")
        );
        assert_eq!(
            super::parse(arrays(3_000).as_bytes()),
            Err(super::Unread::Deep("array"))
        );
        assert_eq!(
            super::parse(objects(super::FAKE_MAX_DEPTH + 1).as_bytes()),
            Err(super::Unread::Deep("object"))
        );
        assert!(super::parse(objects(super::FAKE_MAX_DEPTH).as_bytes()).is_ok());
        assert!(super::parse(arrays(super::FAKE_MAX_DEPTH).as_bytes()).is_ok());
        // Errors deep inside are still found where Go finds them.
        let unclosed = format!("{}1,]", "[".repeat(5_000));
        assert_eq!(
            syntax_error(unclosed.as_bytes()).as_deref(),
            Some("invalid character ']' looking for beginning of value")
        );
    }
}
