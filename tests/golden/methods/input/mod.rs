//! `+genclient:method` extension methods with every allowed verb, Go and Rust type paths,
//! local types, and the `#[genclient(...)]` attribute of the derive (expanded in place).
pub mod ext;
