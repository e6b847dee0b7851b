//! API versions in kube-apiserver's order of preference: GA before beta before alpha, then
//! the higher major and minor number (`v2`, `v1`, `v1beta2`, `v1beta1`, `v1alpha1`), and
//! versions that do not look like that after all of them, in alphabetical order.
//!
//! Discovery lists a group's versions in this order (the first is preferred), and a
//! deprecated CRD version's warning names the first served version preferred over it.

use std::cmp::Ordering;

/// The parts of a Kubernetes-style version: major, stability (0 alpha, 1 beta, 2 GA), minor.
fn parse(version: &str) -> Option<(u64, u8, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let major = rest[..digits].parse().ok()?;
    let tail = &rest[digits..];
    if tail.is_empty() {
        return Some((major, 2, 0));
    }
    let (stability, minor) = if let Some(m) = tail.strip_prefix("alpha") {
        (0, m)
    } else if let Some(m) = tail.strip_prefix("beta") {
        (1, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, stability, minor.parse().ok()?))
}

/// How `a` compares to `b` by preference: `Greater` when `a` is preferred.
pub fn compare(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((ma, sa, na)), Some((mb, sb, nb))) => sa.cmp(&sb).then(ma.cmp(&mb)).then(na.cmp(&nb)),
    }
}

/// Sorts versions most preferred first.
pub fn sort_preferred_first<S: AsRef<str>>(versions: &mut [S]) {
    versions.sort_by(|a, b| compare(b.as_ref(), a.as_ref()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_like_the_real_server() {
        let mut v = vec![
            "foo",
            "v1alpha1",
            "v1",
            "v1beta1",
            "v2",
            "bar",
            "v1beta2",
            "v11alpha2",
            "v12",
        ];
        sort_preferred_first(&mut v);
        assert_eq!(
            v,
            [
                "v12",
                "v2",
                "v1",
                "v1beta2",
                "v1beta1",
                "v11alpha2",
                "v1alpha1",
                "bar",
                "foo"
            ]
        );
    }

    #[test]
    fn odd_spellings_are_not_kube_versions() {
        for v in ["v", "1", "v1gamma1", "v1beta", "va1", "v1beta1x"] {
            assert_eq!(parse(v), None, "{v}");
        }
    }
}
