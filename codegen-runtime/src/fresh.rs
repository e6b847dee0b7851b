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

/// FNV-1a (64 bits) of `bytes`: what `kube-codegen generate` records of each input file.
pub const fn fingerprint(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
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
    fn fingerprints_are_fnv1a_64() {
        // The published test vectors of FNV-1a 64.
        assert_eq!(fingerprint(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fingerprint(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
