//! The string `format`s the real server checks in custom resources (kube-openapi's
//! registry): `date-time`, `date`, `duration`, `byte`, `ipv4`, `ipv6`, `cidr`, `mac`,
//! `uuid`, `hostname`, `email`, `uri`. Others are not checked, as there.

/// Whether `value` has `format`; `None` for a format that is not checked.
pub fn check(format: &str, value: &str) -> Option<bool> {
    let normalized: String = format.chars().filter(|c| *c != '-').collect();
    Some(match normalized.as_str() {
        "datetime" => value.parse::<jiff::Timestamp>().is_ok(),
        "date" => value.parse::<jiff::civil::Date>().is_ok() && value.len() == 10,
        "duration" => is_duration(value),
        "byte" => crate::base64::base64_decode(value).is_ok(),
        "ipv4" => value.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => value.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => value.split_once('/').is_some_and(|(ip, bits)| {
            let max = if ip.contains(':') { 128 } else { 32 };
            ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= max)
        }),
        "mac" => is_mac(value),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => is_uuid(value),
        "hostname" => {
            !value.is_empty()
                && value.len() <= 253
                && value.split('.').all(|l| {
                    !l.is_empty()
                        && l.len() <= 63
                        && !l.starts_with('-')
                        && !l.ends_with('-')
                        && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        }
        "email" => value.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty() && host.contains('.') && !host.contains('@')
        }),
        "uri" => value.split_once(':').is_some_and(|(scheme, _)| {
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }),
        _ => return None,
    })
}

fn is_uuid(v: &str) -> bool {
    let groups: Vec<&str> = v.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

fn is_mac(v: &str) -> bool {
    let parts: Vec<&str> = v.split([':', '-']).collect();
    matches!(parts.len(), 6 | 8 | 20)
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A Go duration with the extra `d` and `w` units: `1h30m`, `500ms`, `2d`.
fn is_duration(v: &str) -> bool {
    let v = v.strip_prefix(['-', '+']).unwrap_or(v);
    if v == "0" {
        return true;
    }
    let mut rest = v;
    let mut any = false;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "ms", "s", "m", "h", "d", "w"]
            .iter()
            .filter(|u| rest.starts_with(**u))
            .max_by_key(|u| u.len());
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn formats() {
        assert_eq!(check("date-time", "2026-01-02T03:04:05Z"), Some(true));
        assert_eq!(check("date-time", "nope"), Some(false));
        assert_eq!(check("date", "2026-01-02"), Some(true));
        assert_eq!(check("duration", "1h30m"), Some(true));
        assert_eq!(check("duration", "soon"), Some(false));
        assert_eq!(check("ipv4", "10.0.0.1"), Some(true));
        assert_eq!(check("cidr", "10.0.0.0/33"), Some(false));
        assert_eq!(
            check("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            Some(true)
        );
        assert_eq!(check("email", "a@b.c"), Some(true));
        assert_eq!(check("int32", "x"), None);
    }
}
