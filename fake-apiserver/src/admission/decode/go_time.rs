//! `metav1.Time` and `metav1.MicroTime` strings as Go's `time.Parse` reads them with the
//! RFC 3339 layouts, and its refusals word for word (`parsing time "garbage" as
//! "2006-01-02T15:04:05Z07:00": cannot parse "garbage" as "2006"`).

/// The layout `metav1.Time` parses with (`time.RFC3339`).
const RFC3339: &str = "2006-01-02T15:04:05Z07:00";
/// The layout `metav1.MicroTime` parses with (`metav1.RFC3339Micro`).
const RFC3339_MICRO: &str = "2006-01-02T15:04:05.000000Z07:00";

/// Go's error for `value` as a `metav1.Time` (`micro`: a `metav1.MicroTime`), or `None`
/// when it parses.
pub(crate) fn parse_error(value: &str, micro: bool) -> Option<String> {
    let layout = if micro { RFC3339_MICRO } else { RFC3339 };
    Parse { layout, value }.run().err()
}

struct Parse<'a> {
    layout: &'a str,
    value: &'a str,
}

/// Why an element did not parse: it does not match the layout's, or its number is out of
/// range (`month`, `hour`, ...).
enum Bad {
    Syntax,
    Range(&'static str),
    /// The fraction `RFC3339Micro` wants is missing at this text.
    Fraction(String),
}

/// The layout's elements in order: the literal before each, and the element itself.
const ELEMENTS: [(&str, &str); 7] = [
    ("", "2006"),
    ("-", "01"),
    ("-", "02"),
    ("T", "15"),
    (":", "04"),
    (":", "05"),
    ("", "Z07:00"),
];

/// Go's `quote` for a parse error (plain ASCII is quoted as is).
fn quote(s: &str) -> String {
    format!("{s:?}")
}

fn digit(s: &str, i: usize) -> bool {
    s.as_bytes().get(i).is_some_and(u8::is_ascii_digit)
}

/// Go's `getnum`: one or two digits (two when `fixed`).
fn getnum(s: &str, fixed: bool) -> Result<(u32, &str), Bad> {
    if !digit(s, 0) {
        return Err(Bad::Syntax);
    }
    let b = s.as_bytes();
    if !digit(s, 1) {
        if fixed {
            return Err(Bad::Syntax);
        }
        return Ok((u32::from(b[0] - b'0'), &s[1..]));
    }
    Ok((
        u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'),
        &s[2..],
    ))
}

fn days_in(month: u32, year: u32) -> u32 {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Parse<'_> {
    fn cannot(&self, rest: &str, element: &str) -> String {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(self.value),
            quote(self.layout),
            quote(rest),
            quote(element)
        )
    }

    fn message(&self, message: &str) -> String {
        format!("parsing time {}{message}", quote(self.value))
    }

    fn run(&self) -> Result<(), String> {
        let micro = self.layout == RFC3339_MICRO;
        let mut rest = self.value;
        let (mut year, mut month, mut day) = (0, 0, 0);
        for (prefix, element) in ELEMENTS {
            if !prefix.is_empty() {
                rest = rest
                    .strip_prefix(prefix)
                    .ok_or_else(|| self.cannot(rest, prefix))?;
            }
            let hold = rest;
            let parsed = match element {
                "2006" => {
                    let four = rest
                        .get(..4)
                        .filter(|p| p.bytes().all(|c| c.is_ascii_digit()));
                    four.map(|p| {
                        year = p.parse().unwrap_or(0);
                        rest = &rest[4..];
                    })
                    .ok_or(Bad::Syntax)
                }
                "01" => getnum(rest, true).and_then(|(m, r)| {
                    rest = r;
                    month = m;
                    if (1..=12).contains(&m) {
                        Ok(())
                    } else {
                        Err(Bad::Range("month"))
                    }
                }),
                "02" => getnum(rest, true).map(|(d, r)| {
                    rest = r;
                    day = d;
                }),
                "15" => getnum(rest, false).and_then(|(h, r)| {
                    rest = r;
                    if h < 24 {
                        Ok(())
                    } else {
                        Err(Bad::Range("hour"))
                    }
                }),
                "04" => getnum(rest, true).and_then(|(m, r)| {
                    rest = r;
                    if m < 60 {
                        Ok(())
                    } else {
                        Err(Bad::Range("minute"))
                    }
                }),
                "05" => getnum(rest, true).and_then(|(s, r)| {
                    rest = r;
                    if s >= 60 {
                        return Err(Bad::Range("second"));
                    }
                    rest = Self::fraction(rest, micro)?;
                    Ok(())
                }),
                _ => Self::zone(rest).map(|r| rest = r),
            };
            match parsed {
                Ok(()) => {}
                Err(Bad::Range(what)) => {
                    return Err(self.message(&format!(": {what} out of range")));
                }
                Err(Bad::Fraction(at)) => return Err(self.cannot(&at, ".000000")),
                Err(Bad::Syntax) => return Err(self.cannot(hold, element)),
            }
        }
        if !rest.is_empty() {
            return Err(self.message(&format!(": extra text: {}", quote(rest))));
        }
        if day < 1 || day > days_in(month, year) {
            return Err(self.message(": day out of range"));
        }
        Ok(())
    }

    /// Fractional seconds after the seconds: optional (any number of digits) for
    /// `time.RFC3339`, exactly six for `RFC3339Micro`.
    fn fraction(rest: &str, micro: bool) -> Result<&str, Bad> {
        let point = rest.starts_with(['.', ',']);
        if micro {
            let six = rest
                .get(1..7)
                .is_some_and(|d| d.bytes().all(|c| c.is_ascii_digit()));
            return if point && six {
                Ok(&rest[7..])
            } else {
                Err(Bad::Fraction(rest.to_owned()))
            };
        }
        if point && digit(rest, 1) {
            let n = 1 + rest[1..].bytes().take_while(u8::is_ascii_digit).count();
            return Ok(&rest[n..]);
        }
        Ok(rest)
    }

    /// `Z07:00`: `Z`, or `±hh:mm`.
    fn zone(rest: &str) -> Result<&str, Bad> {
        if let Some(r) = rest.strip_prefix('Z') {
            return Ok(r);
        }
        let b = rest.as_bytes();
        if b.len() < 6 || b[3] != b':' || !matches!(b[0], b'+' | b'-') {
            return Err(Bad::Syntax);
        }
        let (hour, _) = getnum(&rest[1..3], true)?;
        let (minute, _) = getnum(&rest[4..6], true)?;
        if hour > 24 {
            return Err(Bad::Range("time zone offset hour"));
        }
        if minute > 60 {
            return Err(Bad::Range("time zone offset minute"));
        }
        Ok(&rest[6..])
    }
}

#[cfg(test)]
mod tests {
    use super::parse_error;

    #[test]
    fn refusals_read_like_gos() {
        let layout = "\"2006-01-02T15:04:05Z07:00\"";
        assert_eq!(
            parse_error("garbage", false).unwrap(),
            format!("parsing time \"garbage\" as {layout}: cannot parse \"garbage\" as \"2006\"")
        );
        assert_eq!(
            parse_error("2020-01-01", false).unwrap(),
            format!("parsing time \"2020-01-01\" as {layout}: cannot parse \"\" as \"T\"")
        );
        assert_eq!(
            parse_error("2020-01-01T00:00:00+0100", false).unwrap(),
            format!(
                "parsing time \"2020-01-01T00:00:00+0100\" as {layout}: cannot parse \"+0100\" as \"Z07:00\""
            )
        );
        assert_eq!(
            parse_error("2020-02-30T00:00:00Z", false).unwrap(),
            "parsing time \"2020-02-30T00:00:00Z\": day out of range"
        );
        assert_eq!(
            parse_error("2020-13-01T00:00:00Z", false).unwrap(),
            "parsing time \"2020-13-01T00:00:00Z\": month out of range"
        );
        assert_eq!(
            parse_error("2020-01-01T25:00:00Z", false).unwrap(),
            "parsing time \"2020-01-01T25:00:00Z\": hour out of range"
        );
        assert_eq!(
            parse_error("2020-01-01T00:00:00Zjunk", false).unwrap(),
            "parsing time \"2020-01-01T00:00:00Zjunk\": extra text: \"junk\""
        );
        assert_eq!(parse_error("2020-01-01T1:00:00.5+01:00", false), None);
        assert_eq!(parse_error("2024-02-29T23:59:59Z", false), None);
        assert_eq!(parse_error("2024-02-29T23:59:59.123456Z", true), None);
        assert_eq!(
            parse_error("2024-02-29T23:59:59Z", true).unwrap(),
            "parsing time \"2024-02-29T23:59:59Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\""
        );
    }
}
