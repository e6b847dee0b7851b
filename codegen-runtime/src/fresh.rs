//! A generated tree that is older than its input fails the build: the tree's `mod.rs` checks,
//! at compile time, the fingerprint of every input file it was generated from, and names the
//! command that regenerates it: the crate's `hack/update-codegen.sh` where it has one.
//!
//! ```text
//! error[E0080]: evaluation panicked: generated code is stale: `backup/v1alpha1/backup.rs`
//!               changed since it was generated; run `hack/update-codegen.sh` (it regenerates
//!               the CRDs too), or for this tree alone `kube-codegen generate --input src/apis
//!               --output src/generated`
//! ```

/// The fingerprint of `bytes`: what `kube-codegen generate` records of each input file.
///
/// FNV-1a's step (xor, then multiply by its 64-bit prime) over little-endian 8-byte words,
/// then over the last bytes one at a time, from FNV's offset basis xored with the length.
/// Each step is a bijection of the running hash, so changing any one word changes the
/// fingerprint. Words, taken sixteen bytes at a time by a slice pattern, because this runs
/// in constant evaluation, which pays for every operation: hashing 200 KB of input a byte
/// at a time cost a crate 1.9 s of its build, this way 0.3 s.
pub const fn fingerprint(mut bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    // Eight bytes as a little-endian word, inline: a call costs constant evaluation more
    // than the word does.
    macro_rules! word {
        ($b0:ident, $b1:ident, $b2:ident, $b3:ident, $b4:ident, $b5:ident, $b6:ident, $b7:ident) => {
            *$b0 as u64
                | (*$b1 as u64) << 8
                | (*$b2 as u64) << 16
                | (*$b3 as u64) << 24
                | (*$b4 as u64) << 32
                | (*$b5 as u64) << 40
                | (*$b6 as u64) << 48
                | (*$b7 as u64) << 56
        };
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    while let [
        a0,
        a1,
        a2,
        a3,
        a4,
        a5,
        a6,
        a7,
        b0,
        b1,
        b2,
        b3,
        b4,
        b5,
        b6,
        b7,
        rest @ ..,
    ] = bytes
    {
        hash = (hash ^ word!(a0, a1, a2, a3, a4, a5, a6, a7)).wrapping_mul(PRIME);
        hash = (hash ^ word!(b0, b1, b2, b3, b4, b5, b6, b7)).wrapping_mul(PRIME);
        bytes = rest;
    }
    if let [a0, a1, a2, a3, a4, a5, a6, a7, rest @ ..] = bytes {
        hash = (hash ^ word!(a0, a1, a2, a3, a4, a5, a6, a7)).wrapping_mul(PRIME);
        bytes = rest;
    }
    while let [b, rest @ ..] = bytes {
        hash = (hash ^ *b as u64).wrapping_mul(PRIME);
        bytes = rest;
    }
    hash
}

/// Fails the constant evaluation it runs in (and so the build) with `message` when `input`
/// no longer has the fingerprint `expected`. Called by generated code:
/// `const _: () = fresh(include_bytes!("../apis/..."), 0x..., "...");`.
pub const fn fresh(input: &[u8], expected: u64, message: &'static str) {
    if fingerprint(input) != expected {
        panic!("{}", message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_match_the_generators() {
        // The same figures as kube-codegen-core's `source::fingerprint` test: a word, a word
        // and a tail, and a tail alone.
        for (bytes, expected) in VECTORS {
            assert_eq!(fingerprint(bytes), *expected, "{bytes:?}");
        }
    }

    #[test]
    fn any_changed_byte_changes_the_fingerprint() {
        let text = b"pub struct FooSpec { pub replicas: i32 }".to_vec();
        let base = fingerprint(&text);
        for i in 0..text.len() {
            let mut edited = text.clone();
            edited[i] ^= 0x20;
            assert_ne!(fingerprint(&edited), base, "byte {i}");
        }
        assert_ne!(fingerprint(&text[..text.len() - 1]), base);
    }

    const VECTORS: &[(&[u8], u64)] = &[
        (b"", 0xcbf2_9ce4_8422_2325),
        (b"a", 0xaf63_dd4c_8601_ee3f),
        (b"foobar", 0xcae9_ac87_9a44_a592),
        (b"kubecode", 0xead6_15e3_c052_98f2),
        (b"kube-codegen", 0xc75d_3414_d747_ccb9),
    ];
}
