//! The freshness checks of a generated tree's `mod.rs`: one constant per input file that
//! fails the build, naming the command that regenerates the tree, once the file no longer
//! has the fingerprint it had when the tree was generated (see the runtime's `fresh`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::source::SourceFile;

/// FNV-1a (64 bits) of `bytes`, as the runtime's `fresh::fingerprint` computes it.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash: u64, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// One input file as the tree checks it: its path from the output directory and its
/// fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The path `include_bytes!` reads, relative to the generated `mod.rs`.
    pub from_output: String,
    /// The path relative to the input directory, as messages name it.
    pub relative: String,
    /// Its fingerprint.
    pub fingerprint: u64,
}

/// The inputs of `files`, read from the output directory through `input_from_output`
/// (`../apis`), sorted by path.
pub fn inputs(files: &[SourceFile], input_from_output: &str) -> Vec<Input> {
    let mut out: Vec<Input> = files
        .iter()
        .map(|f| {
            let relative = f
                .relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            Input {
                from_output: format!("{}/{relative}", input_from_output.trim_end_matches('/')),
                relative,
                fingerprint: fingerprint(f.text.as_bytes()),
            }
        })
        .collect();
    out.sort_by(|a, b| a.relative.cmp(&b.relative));
    out
}

/// The checks, for `mod.rs`.
pub fn checks(inputs: &[Input], command: &str) -> TokenStream {
    let checks = inputs.iter().map(|i| {
        let path = &i.from_output;
        let fingerprint = proc_macro2::Literal::u64_suffixed(i.fingerprint);
        let message = format!(
            "generated code is stale: `{}` changed since it was generated; run `{command}`",
            i.relative
        );
        quote! {
            const _: () = ::kube_codegen_runtime::fresh::fresh(::core::include_bytes!(#path), #fingerprint, #message);
        }
    });
    if inputs.is_empty() {
        return TokenStream::new();
    }
    quote!(#(#checks)*)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_the_runtimes() {
        assert_eq!(fingerprint(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fingerprint(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fingerprint(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
