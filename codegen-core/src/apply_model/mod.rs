//! The one model of an apply configuration: for each struct, what each field holds (by JSON
//! name), how its builder adds to it, and how server-side apply merges it.
//!
//! Two sources lower to it: the Rust types of a custom resource ([`custom`], read from syn)
//! and the built-in kinds of the Kubernetes API ([`builtin`], from `apiserver-rules`'
//! table of their OpenAPI shapes). `emit::apply` writes Rust from it and from nothing else,
//! so apply configurations of built-in and custom kinds read, build and merge alike.

pub(crate) mod builtin;
pub(crate) mod custom;

use proc_macro2::TokenStream;

/// The apply configuration of one struct.
#[derive(Debug, Clone)]
pub(crate) struct AcStruct {
    /// `XApplyConfiguration`.
    pub(crate) ident: syn::Ident,
    /// Its visibility (the source struct's).
    pub(crate) vis: syn::Visibility,
    /// Its doc line.
    pub(crate) doc: String,
    /// Its fields, in the order written (custom) or of JSON names (built-in).
    pub(crate) fields: Vec<AcField>,
    /// How others reach it: an `Apply` impl for the source type (custom types, so the
    /// derive and the CLI name it alike), or its own `MERGE` constant (built-in types, named
    /// directly).
    pub(crate) reached: Reached,
    /// The source type is its own apply configuration (`XApplyConfiguration` is an alias of
    /// it): see `apply_tree`'s `own_configurations`.
    pub(crate) own: bool,
}

/// How other apply configurations name a struct's.
#[derive(Debug, Clone)]
pub(crate) enum Reached {
    /// `impl Apply for <source type>`.
    Apply(syn::Ident),
    /// `pub const MERGE` on the apply configuration.
    Merge,
}

/// One field of an apply configuration.
#[derive(Debug, Clone)]
pub(crate) struct AcField {
    /// The Rust field name.
    pub(crate) ident: syn::Ident,
    /// The JSON name.
    pub(crate) json: String,
    /// The source field's doc lines without markers (none: a line naming `json`).
    pub(crate) docs: Vec<String>,
    /// The type held (inside an `Option`, except for a flattened field).
    pub(crate) held: TokenStream,
    /// How its builder adds to it (`None`: no builder, as for a kind's type meta).
    pub(crate) builder: Option<Builder>,
    /// How server-side apply merges it (`None`: replaced whole); for a flattened field,
    /// the merge of its struct, which merges the fields it brings.
    pub(crate) merge: Option<TokenStream>,
    /// `#[serde(flatten)]`: its fields are the struct's own.
    pub(crate) flatten: bool,
}

/// How the builder of a field adds a value.
#[derive(Debug, Clone)]
pub(crate) enum Builder {
    /// `with_x(value: impl Into<held>)`.
    Set,
    /// `with_x(items: impl IntoIterator<Item = item>)`: appends.
    Append {
        /// The item type.
        item: TokenStream,
    },
    /// `with_x(entries)`: merges entries into a map.
    Entries {
        /// The key type; `None`: any `Into<String>`.
        key: Option<TokenStream>,
        /// The value type.
        value: TokenStream,
    },
    /// `with_x(value: held)`: sets a flattened struct.
    Flatten,
}
