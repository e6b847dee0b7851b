//! The CLI's view of a whole API tree: `<input>/<group>/<version>/*.rs`, as Go's layout.
//!
//! Every `.rs` file is parsed with syn; structs marked `+genclient` (or `#[genclient]`, or
//! derived with `GenClient`) become resources of their version module. Package markers
//! come from the version module's `//!` docs. The result feeds the per-file emitters.
//!
//! Three stages, one file each: `lex` and `read` parse each file and read its kinds into
//! their version directory; `assemble` orders them into an [`ApiTree`]; `checks` holds the
//! rules no single type can check (modules declared, one group per directory, one storage
//! version per kind, group modules that do not collide).

mod assemble;
mod checks;
mod lex;
pub mod locate;
mod read;

use crate::diag::{Ctxt, Diagnostic};
use crate::model::Resource;
use crate::schema::Memo;
use crate::source::SourceFile;

pub use lex::{MAX_NESTING, too_deep};
use read::Parsed;

/// Diagnostics of one file.
#[derive(Debug, Clone)]
pub(crate) struct FileDiagnostics {
    /// Index of the file in the input; `None` for a mistake of the tree as a whole.
    pub(crate) file: Option<usize>,
    /// Its mistakes.
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// A resource and where its Rust type lives.
#[derive(Debug, Clone)]
pub struct TreeResource {
    /// The validated resource.
    pub resource: Resource,
    /// The module to import the type from (`crate::apis::samplecontroller::v1alpha1`).
    pub(crate) module: String,
    /// The type derives `GenClient`, so its client already exists in `module`.
    pub(crate) in_place: bool,
    /// What its CRD markers change in the CRD kube builds.
    pub(crate) patches: Vec<crate::schema::Patch>,
    /// The marker behind each patch, in the file `file`.
    pub origins: Vec<crate::schema::Origin>,
    /// The index of the file that defines it.
    pub file: usize,
    /// `+kubebuilder:skipversion`: left out of the CRD.
    pub(crate) skip_version: bool,
}

/// One API group/version and its resources.
#[derive(Debug, Clone)]
pub(crate) struct GroupVersion {
    /// API group.
    pub(crate) group: String,
    /// The group's name in accessors (`+groupGoName`, or the group's first label).
    pub(crate) group_go_name: String,
    /// API version.
    pub(crate) version: String,
    /// Resources, sorted by kind.
    pub(crate) resources: Vec<TreeResource>,
    /// Apply configurations of its kinds, one module per source file, sorted by name.
    pub(crate) apply: Vec<crate::apply_tree::ApplyModule>,
}

/// One version of a custom resource kind, as a CRD sees it.
#[derive(Debug, Clone)]
pub struct CrdVersion {
    /// API group.
    pub group: String,
    /// API version.
    pub(crate) version: String,
    /// The resource.
    pub resource: TreeResource,
    /// Whether it has a client (then `crd_with_markers()` is generated next to it).
    pub(crate) client: bool,
}

/// Every group/version of the input, sorted by group then version.
#[derive(Debug, Clone, Default)]
pub struct ApiTree {
    /// The group/versions whose kinds get clients (`+genclient` or `GenClient`).
    pub(crate) versions: Vec<GroupVersion>,
    /// Every version of every custom resource kind, clients or not (a
    /// `#[derive(CustomResource)]` without `+genclient` still has a CRD), sorted by
    /// group, kind, version.
    pub crds: Vec<CrdVersion>,
    /// What is legal but most likely a mistake, per file (the run still succeeds).
    pub(crate) warnings: Vec<FileDiagnostics>,
    /// The input files the generated `mod.rs` checks at compile time (empty: no checks).
    pub(crate) inputs: Vec<crate::source::Input>,
    /// What the checks of `inputs` tell a user to run when an input changed.
    pub(crate) regenerate: String,
}

/// One file's syntax as the tree reads it (markers in line comments as doc comments), for
/// passes over a tree that [`build`] accepted; `None` when it does not parse.
pub(crate) fn syntax(text: &str) -> Option<syn::File> {
    let mut cx = Ctxt::new();
    let file = lex::parse_source(&mut cx, text).ok();
    drop(cx.into_diagnostics());
    file
}

/// Parses and validates the tree; `api_module` is the Rust path of the input directory.
pub(crate) fn build(
    files: &[SourceFile],
    api_module: &str,
) -> Result<ApiTree, Vec<FileDiagnostics>> {
    let mut cxs: Vec<Ctxt> = files.iter().map(|_| Ctxt::new()).collect();
    let asts: Vec<Option<syn::File>> = files
        .iter()
        .zip(&mut cxs)
        .map(|(file, cx)| match lex::parse_source(cx, &file.text) {
            Ok(ast) => Some(ast),
            Err(err) => {
                cx.syn_error(err);
                None
            }
        })
        .collect();
    let parsed = Parsed::new(files, &asts, api_module);
    let mut memo = Memo::default();
    read::check_markers(&parsed, &mut memo, &mut cxs);
    let mut versions = read::kinds(&parsed, &mut memo, &mut cxs);
    checks::undeclared_modules(&parsed, &versions, &mut cxs);
    let ac_kinds = read::apply_kinds(&mut versions);
    read::add_apply_modules(&parsed, ac_kinds, &mut versions, &mut cxs);
    let warnings: Vec<FileDiagnostics> = cxs
        .iter_mut()
        .enumerate()
        .map(|(index, cx)| FileDiagnostics {
            file: Some(index),
            diagnostics: cx.take_warnings(),
        })
        .filter(|fd| !fd.diagnostics.is_empty())
        .collect();
    let mut errors: Vec<FileDiagnostics> = cxs
        .into_iter()
        .enumerate()
        .map(|(index, cx)| FileDiagnostics {
            file: Some(index),
            diagnostics: cx.into_diagnostics(),
        })
        .filter(|fd| !fd.diagnostics.is_empty())
        .collect();
    let mut tree = assemble::assemble(versions, &mut errors);
    tree.warnings = warnings;
    if errors.is_empty() {
        Ok(tree)
    } else {
        Err(errors)
    }
}
