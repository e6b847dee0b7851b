//! `resource.Quantity` as kube-apiserver reads and writes it: parsed, rounded up to nano
//! units, and written back in canonical form (`1024Mi` is stored as `1Gi`, `0.5` as
//! `500m`, `1000m` as `1`), unless the text was already canonical; and
//! `SetDefaults_ResourceList`'s rounding of resource amounts up to milli units.

/// How a quantity is written: with a decimal SI suffix, a binary one, or an exponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// A parsed quantity: `unscaled * 10^scale`, its format, and the text it came from when
/// Go keeps that text (it was canonical already).
#[derive(Debug, Clone, PartialEq)]
struct Quantity {
    unscaled: i128,
    scale: i32,
    format: Format,
    text: Option<String>,
}

const NANO: i32 = -9;
/// `maxInt64Factors`: the decimal digits an int64 always holds.
const MAX_INT64_FACTORS: i32 = 18;

/// The canonical text of `text` read as a quantity, or `None` when Go would not parse it.
pub fn canonical(text: &str) -> Option<String> {
    parse(text.trim()).map(|q| q.to_text())
}

/// Go's `ParseQuantity` error for `text` (as `Quantity.UnmarshalJSON` passes it: the JSON
/// value's text, without quotes, trimmed), or `None` when it parses.
pub fn parse_error(text: &str) -> Option<&'static str> {
    const FORMAT: &str = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    let text = text.trim();
    if parse(text).is_some() {
        return None;
    }
    Some(match scan(text) {
        _ if text.is_empty() => FORMAT,
        None => FORMAT,
        Some(p) if interpret(p.suffix).is_none() => "unable to parse quantity's suffix",
        Some(_) => "unable to parse numeric part of quantity",
    })
}

/// The canonical text of a resource amount after `SetDefaults_ResourceList` rounded it up
/// to milli units (`0.0001` becomes `1m`).
pub fn canonical_milli(text: &str) -> Option<String> {
    let mut q = parse(text.trim())?;
    if q.scale < -3 {
        q.text = None;
        q.unscaled = round_away(q.unscaled, (-3 - q.scale) as u32)?;
        q.scale = -3;
    }
    Some(q.to_text())
}

/// The pieces of a quantity's text: sign, digits before and after the point, suffix.
struct Pieces<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// Go's `parseQuantityString`: a permissive scanner; the suffix is checked later.
fn scan(s: &str) -> Option<Pieces<'_>> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    if let Some(&c) = b.first() {
        if c == b'-' {
            positive = false;
            pos += 1;
        } else if c == b'+' {
            pos += 1;
        }
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Some(Pieces {
            positive,
            value: "0",
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        return Some(Pieces {
            positive,
            value: s,
            num: &s[start..],
            denom: "",
            suffix: "",
        });
    }
    let num = if pos == start { "0" } else { &s[start..pos] };
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let d = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[d..pos];
        if pos >= end {
            return Some(Pieces {
                positive,
                value: s,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return None;
    }
    Some(Pieces {
        positive,
        value,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// A suffix's base, exponent and format.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let dec = |e| Some((10, e, Format::DecimalSi));
    let bin = |e| Some((2, e, Format::BinarySi));
    match suffix {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        s if s.len() > 1 && s.starts_with(['e', 'E']) => {
            let e: i64 = s[1..].parse().ok()?;
            Some((10, i32::try_from(e).ok()?, Format::DecimalExponent))
        }
        _ => None,
    }
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// `v / 10^n`, rounded away from zero.
fn round_away(v: i128, n: u32) -> Option<i128> {
    let d = pow10(n)?;
    let (q, r) = (v / d, v % d);
    Some(if r == 0 { q } else { q + v.signum() })
}

/// Go's `ParseQuantity`.
fn parse(s: &str) -> Option<Quantity> {
    if s.is_empty() {
        return None;
    }
    if s == "0" {
        return Some(Quantity {
            unscaled: 0,
            scale: 0,
            format: Format::DecimalSi,
            text: Some(s.to_owned()),
        });
    }
    let p = scan(s)?;
    let (base, exponent, format) = interpret(p.suffix)?;
    // The fast path: an int64 amount, with the text kept when it is canonical.
    let digits = (p.num.len() + p.denom.len()) as i32;
    let (precision, mut scale, mantissa) = match format {
        Format::DecimalSi | Format::DecimalExponent => (MAX_INT64_FACTORS - digits, exponent, 1i64),
        Format::BinarySi if exponent >= 0 && p.denom.is_empty() => (
            15 - p.num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1,
            0,
            1i64 << exponent,
        ),
        Format::BinarySi => (-1, 0, 1),
    };
    if precision >= 0 {
        scale -= p.denom.len() as i32;
        if scale >= NANO {
            let shifted = format!("{}{}", p.num, p.denom);
            let value: i64 = shifted.parse().ok()?;
            if let Some(result) = value.checked_mul(mantissa) {
                let result = if p.positive { result } else { -result };
                let canonical = match format {
                    Format::BinarySi => exponent % 10 == 0 && value & 0x07 != 0,
                    _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
                };
                return Some(Quantity {
                    unscaled: i128::from(result),
                    scale,
                    format,
                    text: canonical.then(|| s.to_owned()),
                });
            }
        }
    }
    // The exact path: a decimal, rounded up to nano units.
    let negative = p.value.starts_with('-');
    let body = p.value.trim_start_matches(['+', '-']);
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    let mut unscaled: i128 = format!("{int_part}{frac_part}")
        .trim_start_matches('0')
        .parse::<i128>()
        .or_else(|e| {
            if format!("{int_part}{frac_part}")
                .trim_start_matches('0')
                .is_empty()
            {
                Ok(0)
            } else {
                Err(e)
            }
        })
        .ok()?;
    let mut scale = -(frac_part.len() as i32);
    if base == 10 {
        scale += exponent;
    } else {
        unscaled = unscaled.checked_mul(1i128.checked_shl(exponent as u32)?)?;
    }
    if unscaled != 0 && scale < NANO {
        unscaled = round_away(unscaled, (NANO - scale) as u32)?;
        scale = NANO;
    }
    let mut format = format;
    if format == Format::BinarySi {
        // Capped at the largest int64.
        let max = i128::from(i64::MAX);
        if cmp_scaled(unscaled, scale, max, 0) == std::cmp::Ordering::Greater {
            unscaled = max;
            scale = 0;
        }
        if cmp_scaled(unscaled, scale, 1, 0) == std::cmp::Ordering::Less && unscaled > 0 {
            format = Format::DecimalSi;
        }
    }
    if negative {
        unscaled = -unscaled;
    }
    Some(Quantity {
        unscaled,
        scale,
        format,
        text: None,
    })
}

/// Compares `a * 10^sa` with `b * 10^sb`.
fn cmp_scaled(a: i128, sa: i32, b: i128, sb: i32) -> std::cmp::Ordering {
    let s = sa.min(sb);
    let lift = |v: i128, by: i32| {
        pow10(by as u32)
            .and_then(|p| v.checked_mul(p))
            .unwrap_or(if v < 0 { i128::MIN } else { i128::MAX })
    };
    lift(a, sa - s).cmp(&lift(b, sb - s))
}

impl Quantity {
    /// Go's `MarshalJSON`: the kept text, or the canonical form.
    fn to_text(&self) -> String {
        if let Some(t) = &self.text {
            return t.clone();
        }
        if self.unscaled == 0 {
            return "0".to_owned();
        }
        let mut format = self.format;
        let mut whole = None;
        if format == Format::BinarySi {
            let small = cmp_scaled(self.unscaled, self.scale, -1024, 0).is_gt()
                && cmp_scaled(self.unscaled, self.scale, 1024, 0).is_lt();
            if small {
                format = Format::DecimalSi;
            } else {
                // Rounded up to a whole number; a fraction would be lost, so decimal then.
                let rounded = if self.scale >= 0 {
                    pow10(self.scale as u32).and_then(|p| self.unscaled.checked_mul(p))
                } else {
                    round_away(self.unscaled, (-self.scale) as u32)
                };
                match rounded {
                    Some(r) if cmp_scaled(r, 0, self.unscaled, self.scale).is_eq() => {
                        whole = Some(r)
                    }
                    _ => format = Format::DecimalSi,
                }
            }
        }
        match (format, whole) {
            (Format::BinarySi, Some(mut amount)) => {
                let mut exponent = 0;
                while amount != 0 && amount % 1024 == 0 {
                    amount /= 1024;
                    exponent += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
                    .get(exponent)
                    .copied()
                    .unwrap_or("");
                format!("{amount}{suffix}")
            }
            _ => {
                let (mut amount, mut exponent) = (self.unscaled, self.scale);
                while amount % 10 == 0 {
                    amount /= 10;
                    exponent += 1;
                }
                while exponent % 3 != 0 {
                    amount *= 10;
                    exponent -= 1;
                }
                let suffix = match format {
                    Format::DecimalExponent if exponent == 0 => String::new(),
                    Format::DecimalExponent => format!("e{exponent}"),
                    _ => match exponent {
                        -9 => "n",
                        -6 => "u",
                        -3 => "m",
                        3 => "k",
                        6 => "M",
                        9 => "G",
                        12 => "T",
                        15 => "P",
                        18 => "E",
                        _ => "",
                    }
                    .to_owned(),
                };
                format!("{amount}{suffix}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_gos() {
        let format = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
        for bad in ["banana", "", "1Qi", "1.2.3", "true", "[1]", "1Gx"] {
            assert_eq!(parse_error(bad), Some(format), "{bad}");
        }
        for good in ["1", " 2Gi ", "500m", "1e3", "0"] {
            assert_eq!(parse_error(good), None, "{good}");
        }
    }

    #[test]
    fn quantities_are_written_as_go_writes_them() {
        for (input, out) in [
            ("1024Mi", "1Gi"),
            ("1Gi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("0.5", "500m"),
            ("500m", "500m"),
            ("1000m", "1"),
            ("1", "1"),
            ("100", "100"),
            ("1000", "1k"),
            ("1e3", "1e3"),
            ("1.5e3", "1500"),
            ("2000Ki", "2000Ki"),
            ("2048Ki", "2Mi"),
            ("0.1Ki", "102400m"),
            ("512", "512"),
            ("0", "0"),
            ("0Gi", "0"),
            ("-1", "-1"),
            ("10G", "10G"),
            ("1500M", "1500M"),
            ("0.0001", "100u"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("123Mi", "123Mi"),
            ("1.1", "1100m"),
        ] {
            assert_eq!(canonical(input).as_deref(), Some(out), "{input}");
        }
        assert_eq!(canonical("1x"), None);
        assert_eq!(canonical("abc"), None);
        assert_eq!(canonical_milli("0.0001").as_deref(), Some("1m"));
        assert_eq!(canonical_milli("1Gi").as_deref(), Some("1Gi"));
        assert_eq!(canonical_milli("100n").as_deref(), Some("1m"));
    }
}
