//! The model behind `kube-codegen`: annotations in, validated model, Rust out.
//!
//! Not meant to be used directly: what is public here is what the two front ends and the
//! workspace's tests call, and nothing else. The derives of `kube-codegen-derive` call
//! [`derive_gen_client`], [`derive_crd_markers`] and [`derive_apply_configuration`]; the
//! `kube-codegen` CLI reads its input with [`source::load`] and calls [`generate`]
//! (`generate`, `verify`), [`crd_runner`] (`crds`), [`lint()`] (`lint`), [`rbac`] and
//! [`webhook`], and shows mistakes with [`render`]. Everything else is `pub(crate)`.
//!
//! The modules form layers, each importing only the layers below it (the test
//! `tests/layers.rs` keeps it so), lowest first:
//!
//! 1. foundations: [`diag`] (mistakes, collected in one context with their spans; nothing
//!    panics on user input), [`naming`], [`source`] (the input files), [`ast`] (serde's view
//!    of the types: JSON names, skip, flatten, default, the JSON shape of a Rust type);
//! 2. readers over them: [`render`] (`file:line:col` and a caret), [`rbac`] and [`webhook`]
//!    markers, `cel_type` (the CEL type of a field);
//! 3. `attr`: `#[kube(...)]`, `+genclient` markers, `#[genclient(...)]` and `+kubebuilder:`
//!    markers into raw values;
//! 4. [`model`]: validated resources, with Go's `+genclient` rules and cross-checks;
//! 5. `builtin` (k8s-openapi kinds), `check` (JSON paths against the types), `apply_model`
//!    (apply configurations, lowered from Rust types and from the built-in types table);
//! 6. [`schema`] (CRD markers checked and turned into patches), `apply_tree` (which types of
//!    a tree get apply configurations);
//! 7. [`tree`]: the CLI's view of a whole API tree (groups, versions, module paths);
//! 8. [`emit`]: one emitter per artifact, writing final code; [`emit::files`] plans the
//!    tree's files, then writes their contents; [`mod@lint`]: the API-convention rules over
//!    a tree's kinds (and, on request, over a derive's input).
#![warn(unreachable_pub)]

mod apply_model;
mod apply_tree;
pub mod ast;
mod attr;
mod builtin;
mod cel_type;
mod check;
pub mod diag;
pub mod emit;
pub mod lint;
pub mod model;
pub mod naming;
pub mod rbac;
pub mod render;
pub mod schema;
pub mod source;
pub mod tree;
pub mod webhook;

use proc_macro2::TokenStream;

use crate::diag::Ctxt;
use crate::model::Origin;

/// The `GenClient` derive: the typed client of the annotated spec type, or compile errors.
pub fn derive_gen_client(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(err) => return err.to_compile_error(),
    };
    let mut cx = Ctxt::new();
    let resource = model::resource_from_input(&mut cx, &input, Origin::Derive);
    let mut markers = schema::Markers::default();
    if let Some(resource) = &resource
        && let Ok(spec) = syn::parse2::<syn::ItemStruct>(quote::ToTokens::to_token_stream(&input))
    {
        let structs = ast::Structs::new([], Some(&spec));
        check::run(&mut cx, resource, &spec, &structs);
        markers = schema::resource_patches(
            &mut cx,
            &spec,
            resource,
            &structs,
            &mut schema::Memo::default(),
            true,
        );
    }
    let spec = syn::parse2::<syn::ItemStruct>(quote::ToTokens::to_token_stream(&input)).ok();
    let mut warnings = diag::to_warnings(&cx.take_warnings());
    if let Some(spec) = &spec {
        warnings.extend(diag::to_warnings(&lint::derive_warnings(
            &mut cx,
            spec,
            lint::Root::Spec,
        )));
    }
    match (cx.finish(()), resource) {
        (Ok(()), Some(resource)) => {
            let spec = spec.filter(|_| resource.apply_configuration);
            // The checks of what the apply configuration reaches come first: they are the
            // errors that say what to do.
            let mut items = spec
                .as_ref()
                .map(apply_model::custom::reached_checks)
                .unwrap_or_default();
            items.extend(warnings);
            items.extend(emit::resource_items(&resource));
            items.extend(emit::crd::crd_items(&resource, &markers));
            if let Some(spec) = spec {
                items.extend(emit::apply::kind_items(&resource, &spec.ident));
                items.extend(emit::apply::struct_items(&spec));
            }
            items
        }
        (Err(diagnostics), _) => diag::to_compile_errors(&diagnostics),
        (Ok(()), None) => TokenStream::new(),
    }
}

/// The `CrdMarkers` derive: the markers of a struct below a spec, checked where they are
/// written and handed to the spec's CRD at run time.
pub fn derive_crd_markers(input: TokenStream) -> TokenStream {
    let s: syn::ItemStruct = match syn::parse2(input) {
        Ok(s) => s,
        Err(err) => {
            return syn::Error::new(
                err.span(),
                "`CrdMarkers` derives on structs (the types below a spec or status that carry `+kubebuilder:` markers)",
            )
            .to_compile_error();
        }
    };
    let mut cx = Ctxt::new();
    let markers = schema::struct_markers(&mut cx, &s);
    let mut warnings = diag::to_warnings(&cx.take_warnings());
    warnings.extend(diag::to_warnings(&lint::derive_warnings(
        &mut cx,
        &s,
        lint::Root::Nested,
    )));
    match cx.finish(()) {
        Ok(()) => {
            warnings.extend(emit::crd::crd_markers_impl(&s, &markers));
            warnings
        }
        Err(diagnostics) => diag::to_compile_errors(&diagnostics),
    }
}

/// The `ApplyConfiguration` derive: the apply configuration of a struct or enum used by a
/// spec (for specs marked `+kubebuilder:ac:generate=true`).
pub fn derive_apply_configuration(input: TokenStream) -> TokenStream {
    match syn::parse2::<syn::Item>(input) {
        // A tuple struct (a newtype) is written as what it holds: applied whole, as an enum.
        Ok(syn::Item::Struct(s))
            if s.generics.params.is_empty() && !matches!(s.fields, syn::Fields::Named(_)) =>
        {
            emit::apply::enum_ident_items(&s.ident)
        }
        Ok(syn::Item::Struct(s)) if s.generics.params.is_empty() => {
            let mut items = apply_model::custom::reached_checks(&s);
            items.extend(emit::apply::struct_items(&s));
            items
        }
        Ok(syn::Item::Enum(e)) if e.generics.params.is_empty() => emit::apply::enum_items(&e),
        Ok(other) => syn::Error::new_spanned(
            other,
            "`ApplyConfiguration` derives on structs and enums without generic parameters",
        )
        .to_compile_error(),
        Err(err) => err.to_compile_error(),
    }
}

/// Why a tree could not be generated.
#[derive(Debug)]
pub enum GenerateError {
    /// The input could not be read.
    Io(source::LoadError),
    /// The annotations have mistakes; each is rendered with `file:line:col` and a caret.
    Diagnostics(Vec<String>),
    /// The emitter produced tokens that are not valid Rust (a bug in kube-codegen).
    Internal(syn::Error),
}

impl std::fmt::Display for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenerateError::Io(err) => write!(f, "error: {err}"),
            GenerateError::Diagnostics(rendered) => {
                for d in rendered {
                    writeln!(f, "{d}")?;
                }
                let n = rendered.len();
                write!(
                    f,
                    "error: could not generate: {n} error{}",
                    if n == 1 { "" } else { "s" }
                )
            }
            GenerateError::Internal(err) => {
                write!(f, "error: kube-codegen emitted invalid Rust (a bug): {err}")
            }
        }
    }
}

impl std::error::Error for GenerateError {}

/// The compile-time check of a generated tree against its inputs (see [`generate`]).
#[derive(Debug, Clone, Copy)]
pub struct Freshness<'a> {
    /// The input directory's path from the output's (`../apis`).
    pub input_from_output: &'a str,
    /// What the failing build tells the user to run: the script that regenerates the tree
    /// and everything made from the same types (the CRDs), or the `generate` command.
    pub regenerate: &'a str,
}

/// The CLI's entry point (`kube-codegen generate` and `verify`): the whole tree for the API
/// types in `files` (read with [`source::load`]; `api_module` is their Rust module, such as
/// `crate::apis`), in memory, with the warnings rendered as the CLI prints them
/// (`warning: ...`, `--> file:line:col`, a caret): what is legal but most likely a mistake.
///
/// `command` is written into each header as the way to reproduce the files. With
/// [`Freshness`], the tree's `mod.rs` fails the build once an input file changes.
pub fn generate(
    files: &[source::SourceFile],
    api_module: &str,
    command: &str,
    fresh: Option<Freshness<'_>>,
) -> Result<(Vec<emit::files::OutputFile>, Vec<String>), GenerateError> {
    let mut tree = build_tree(files, api_module)?;
    if let Some(fresh) = fresh {
        tree.inputs = source::inputs(files, fresh.input_from_output);
        tree.regenerate = fresh.regenerate.to_owned();
    }
    let warnings = rendered(files, &tree.warnings, "warning");
    let out = emit::files::tree_files(&tree, command).map_err(GenerateError::Internal)?;
    Ok((out, warnings))
}

/// Diagnostics of `files` as the CLI prints them, with `severity`.
fn rendered(
    files: &[source::SourceFile],
    diagnostics: &[tree::FileDiagnostics],
    severity: &str,
) -> Vec<String> {
    diagnostics
        .iter()
        .flat_map(|fd| {
            fd.diagnostics
                .iter()
                .map(move |d| match fd.file.and_then(|i| files.get(i)) {
                    Some(file) => render::render_as(severity, file, d),
                    None => format!("{severity}: {}\n", d.message),
                })
        })
        .collect()
}

/// The validated tree, or every mistake rendered with `file:line:col`.
fn build_tree(
    files: &[source::SourceFile],
    api_module: &str,
) -> Result<tree::ApiTree, GenerateError> {
    tree::build(files, api_module)
        .map_err(|errors| GenerateError::Diagnostics(rendered(files, &errors, "error")))
}

/// The CLI's `kube-codegen lint`: the API-convention rules ([`lint::RULES`]) over every
/// custom resource kind of `files`. `Err` when the tree has mistakes (its markers, or a
/// `+kube-codegen:lint:ignore` without a known rule or a reason), rendered; the findings are
/// in the report.
pub fn lint(files: &[source::SourceFile]) -> Result<lint::Report, GenerateError> {
    let tree = build_tree(files, "crate::apis")?;
    lint::run(files, &tree).map_err(GenerateError::Diagnostics)
}

/// For `kube-codegen crds`: the tree of `files` read as the module `api_module` of the
/// user's crate (`my_crate::apis`), and the `main.rs` of a runner that prints its CRDs.
pub fn crd_runner(
    files: &[source::SourceFile],
    api_module: &str,
) -> Result<(tree::ApiTree, String), GenerateError> {
    let tree = build_tree(files, api_module)?;
    let main = emit::crd::runner_main(&tree)
        .and_then(emit::format_items)
        .map_err(GenerateError::Internal)?;
    Ok((tree, main))
}

/// The book's marker reference (Markdown), written from the tables the checker reads markers
/// with; an error names accepted markers that have no description yet.
pub fn marker_reference() -> Result<String, String> {
    attr::reference::markdown()
}
