//! The syntax errors Go's `encoding/json` reports for a malformed body, with its wording:
//! the real server quotes them in its 400s (`invalid character 'x' looking for beginning
//! of value`, `unexpected end of JSON input`, ...).
//!
//! This is a checker only: bodies it accepts are parsed by `serde_json`.

/// How deep arrays and objects may nest before Go's scanner gives up.
const MAX_DEPTH: usize = 10_000;

/// Go's message for the first syntax error in `data`, or `None` when Go's scanner accepts it.
pub(crate) fn syntax_error(data: &[u8]) -> Option<String> {
    let mut s = Scanner { data, at: 0 };
    let result = s.value(0).and_then(|()| {
        s.skip_space();
        match s.peek() {
            Some(c) => Err(invalid(c, "after top-level value")),
            None => Ok(()),
        }
    });
    result.err()
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

    fn value(&mut self, depth: usize) -> Result<(), String> {
        let c = self.next_token()?;
        self.value_from(c, depth)
    }

    fn value_from(&mut self, c: u8, depth: usize) -> Result<(), String> {
        match c {
            b'{' | b'[' if depth + 1 > MAX_DEPTH => Err(invalid(c, "exceeded max depth")),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(c),
            b't' => self.literal(b"rue", "true"),
            b'f' => self.literal(b"alse", "false"),
            b'n' => self.literal(b"ull", "null"),
            _ => Err(invalid(c, "looking for beginning of value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), String> {
        let mut c = self.next_token()?;
        if c == b'}' {
            return Ok(());
        }
        loop {
            if c != b'"' {
                return Err(invalid(c, "looking for beginning of object key string"));
            }
            self.string()?;
            let colon = self.next_token()?;
            if colon != b':' {
                return Err(invalid(colon, "after object key"));
            }
            self.value(depth)?;
            match self.next_token()? {
                b',' => c = self.next_token()?,
                b'}' => return Ok(()),
                other => return Err(invalid(other, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), String> {
        let first = self.next_token()?;
        if first == b']' {
            return Ok(());
        }
        self.value_from(first, depth)?;
        loop {
            match self.next_token()? {
                b',' => self.value(depth)?,
                b']' => return Ok(()),
                other => return Err(invalid(other, "after array element")),
            }
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
}
