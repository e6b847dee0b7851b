//! Where each part of a tree's CRDs is written in the Rust sources: for every kind and
//! version, each schema path's field, its type, the struct whose properties sit there, the
//! markers that set its keywords, and a `+kube-codegen:compat:acknowledge` on it.
//!
//! `kube-codegen compat --input` reads this to show a change found between two CRDs at the
//! Rust token that made it. Paths are written as the compatibility report writes them:
//! property names joined with `.`, and `[*]` for a list's items or a map's values
//! (`spec.ports[*].name`).

use std::collections::{BTreeMap, HashMap};

use syn::ItemStruct;
use syn::spanned::Spanned;

use super::read::Parsed;
use crate::ast::{Container, Shape, Structs, shape};
use crate::attr::marker::{self, ACKNOWLEDGE, Marker};
use crate::diag::{Ctxt, Loc};
use crate::source::SourceFile;

/// A place in the input: the index of its file and where in it.
#[derive(Debug, Clone)]
pub struct At {
    /// The index of the file in the input.
    pub file: usize,
    /// The tokens (and, for a marker, the words inside its comment).
    pub loc: Loc,
}

/// What the sources say about one schema path of a CRD version.
#[derive(Debug, Clone, Default)]
pub struct PathSource {
    /// The field's name, when the path is a field.
    pub field: Option<At>,
    /// The field's type.
    pub ty: Option<At>,
    /// The name of the struct whose properties are at this path.
    pub structure: Option<At>,
    /// The markers that set schema keywords here: the keyword (`maximum`, `pattern`,
    /// `x-kubernetes-validations`, `required`, ...) and the marker.
    pub markers: Vec<(&'static str, At)>,
    /// `+kube-codegen:compat:acknowledge="reason"` on the field (or the struct): its reason
    /// and where it is written.
    pub acknowledged: Option<(String, At)>,
}

/// One version of one kind's CRD, as the sources write it.
#[derive(Debug, Clone)]
pub struct KindSource {
    /// The CRD's name (`widgets.example.com`).
    pub crd: String,
    /// The version.
    pub version: String,
    /// The kind (`Widget`).
    pub kind_name: String,
    /// The spec struct's name: where the kind as a whole is written.
    pub kind: At,
    /// Where the CRD's own fields are set, by the report's path (`spec.group`,
    /// `spec.names.kind`, `spec.names.plural`, `spec.scope`).
    pub crd_fields: Vec<(&'static str, At)>,
    /// Each schema path the sources show, from the object's root (`spec.size`).
    pub paths: BTreeMap<String, PathSource>,
}

/// The sources of every custom resource version of the tree in `files` (as `generate` reads
/// them); files that do not parse are passed over.
pub fn sources(files: &[SourceFile], api_module: &str) -> Vec<KindSource> {
    let mut cx = Ctxt::new();
    let asts: Vec<Option<syn::File>> = files
        .iter()
        .map(|f| super::lex::parse_source(&mut cx, &f.text).ok())
        .collect();
    let parsed = Parsed::new(files, &asts, api_module);
    let mut file_of: HashMap<usize, usize> = HashMap::new();
    for (index, ast) in asts.iter().enumerate() {
        for item in ast.iter().flat_map(|a| &a.items) {
            if let syn::Item::Struct(s) = item {
                file_of.insert(std::ptr::from_ref(s) as usize, index);
            }
        }
    }
    let mut out = Vec::new();
    for (index, (file, ast)) in files.iter().zip(&asts).enumerate() {
        let Some(ast) = ast else { continue };
        if super::read::version_dir(file).is_none() {
            continue;
        }
        let structs = parsed.view(file, ast);
        for item in &ast.items {
            let syn::Item::Struct(spec) = item else {
                continue;
            };
            let input: syn::DeriveInput = spec.clone().into();
            let origin = crate::model::Origin::Derive;
            let Some(resource) = crate::model::resource_from_input(&mut cx, &input, origin) else {
                continue;
            };
            if resource.builtin {
                continue;
            }
            let mut walk = Walk {
                structs: &structs,
                file_of: &file_of,
                paths: BTreeMap::new(),
            };
            let kube = &resource.kube;
            let root = if kube.no_spec.is_some() { "" } else { "spec" };
            walk.walk(spec, root, 0);
            let status = kube
                .status
                .as_ref()
                .map(|s| s.value.rsplit("::").next().unwrap_or(&s.value).to_owned());
            if let Some(status) = status.as_deref().and_then(|n| structs.get(n)) {
                walk.walk(status, "status", 0);
            }
            let at = |span: proc_macro2::Span| At {
                file: index,
                loc: Loc::span(span),
            };
            let mut crd_fields = Vec::new();
            let keyed = [
                ("spec.group", kube.group.as_ref().map(|g| g.span)),
                ("spec.names.kind", kube.kind.as_ref().map(|k| k.span)),
                ("spec.names.plural", kube.plural.as_ref().map(|p| p.span)),
                ("spec.scope", kube.namespaced.or(kube.span)),
            ];
            for (path, span) in keyed {
                crd_fields.extend(span.map(|s| (path, at(s))));
            }
            out.push(KindSource {
                crd: format!("{}.{}", resource.plural, resource.group),
                version: resource.version.clone(),
                kind_name: resource.kind.clone(),
                kind: at(resource.span),
                crd_fields,
                paths: walk.paths,
            });
        }
    }
    // Only what is read here was checked: the mistakes are `generate`'s and `crds`' to show.
    drop(cx.into_diagnostics());
    out
}

/// The walk from a spec or status struct down through the structs the tree shows.
struct Walk<'s, 'a> {
    structs: &'s Structs<'a>,
    file_of: &'s HashMap<usize, usize>,
    paths: BTreeMap<String, PathSource>,
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

impl<'a> Walk<'_, 'a> {
    fn file(&self, s: &ItemStruct) -> usize {
        self.file_of
            .get(&(std::ptr::from_ref(s) as usize))
            .copied()
            .unwrap_or(0)
    }

    fn walk(&mut self, s: &'a ItemStruct, path: &str, depth: usize) {
        if depth > 16 {
            return;
        }
        let file = self.file(s);
        let at = |loc: Loc| At { file, loc };
        let here = self.paths.entry(path.to_owned()).or_default();
        here.structure = Some(at(Loc::span(s.ident.span())));
        let markers = marker::read_checked_elsewhere(&s.attrs);
        record(here, &markers, file);
        for field in Container::read(s).fields {
            let f = field.syn;
            let field_shape = shape(&f.ty, self.structs);
            if field.flatten {
                if let Shape::Struct(inner) = field_shape {
                    self.walk(inner, path, depth + 1);
                }
                continue;
            }
            let Some(json) = field.json else { continue };
            let mut at_path = child(path, &json);
            let markers = marker::read_checked_elsewhere(&f.attrs);
            let entry = self.paths.entry(at_path.clone()).or_default();
            entry.field = Some(at(Loc::span(field.ident.span())));
            entry.ty = Some(at(Loc::span(f.ty.span())));
            record(entry, markers.iter().filter(|m| m.steps.is_empty()), file);
            for m in markers.iter().filter(|m| !m.steps.is_empty()) {
                let inner = format!("{at_path}{}", "[*]".repeat(m.steps.len()));
                record(self.paths.entry(inner).or_default(), [m], file);
            }
            let mut sh = field_shape;
            for _ in 0..8 {
                match sh {
                    Shape::Array(t) | Shape::Map(t) => {
                        at_path.push_str("[*]");
                        sh = shape(t, self.structs);
                    }
                    Shape::Struct(inner) => {
                        self.walk(inner, &at_path, depth + 1);
                        break;
                    }
                    _ => break,
                }
            }
        }
    }
}

/// Records `markers`, written in `file`, at `entry`.
fn record<'m>(entry: &mut PathSource, markers: impl IntoIterator<Item = &'m Marker>, file: usize) {
    for m in markers {
        if m.name == ACKNOWLEDGE {
            let reason = m.value.as_deref().map(marker::unquoted).unwrap_or_default();
            let at = At {
                file,
                loc: m.value_loc.clone(),
            };
            entry.acknowledged = Some((reason, at));
            continue;
        }
        if let Some(key) = keyword(m.name) {
            // A CEL rule is shown at its `rule=...`.
            let loc = match (&m.value, m.arg("rule")) {
                (Some(_), _) => m.value_loc.clone(),
                (None, Some(rule)) => rule.loc.clone(),
                (None, None) => m.name_loc.clone(),
            };
            entry.markers.push((key, At { file, loc }));
        }
    }
}

/// The schema keyword a marker sets.
fn keyword(name: &str) -> Option<&'static str> {
    let short = name.rsplit(':').next().unwrap_or(name);
    Some(match short {
        "Minimum" => "minimum",
        "Maximum" => "maximum",
        "ExclusiveMinimum" => "exclusiveMinimum",
        "ExclusiveMaximum" => "exclusiveMaximum",
        "MultipleOf" => "multipleOf",
        "MinLength" => "minLength",
        "MaxLength" => "maxLength",
        "Pattern" => "pattern",
        "MinItems" => "minItems",
        "MaxItems" => "maxItems",
        "UniqueItems" => "uniqueItems",
        "MinProperties" => "minProperties",
        "MaxProperties" => "maxProperties",
        "Enum" => "enum",
        "Format" => "format",
        "Type" | "XIntOrString" => "type",
        "XValidation" => "x-kubernetes-validations",
        "EmbeddedResource" | "XEmbeddedResource" => "x-kubernetes-embedded-resource",
        "Optional" | "Required" | "optional" | "required" => "required",
        "PreserveUnknownFields" | "XPreserveUnknownFields" => {
            "x-kubernetes-preserve-unknown-fields"
        }
        "default" => "default",
        "nullable" => "nullable",
        "listType" => "x-kubernetes-list-type",
        "listMapKey" => "x-kubernetes-list-map-keys",
        "mapType" | "structType" => "x-kubernetes-map-type",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::sources;
    use crate::source::SourceFile;

    fn file(relative: &str, text: &str) -> SourceFile {
        SourceFile {
            path: PathBuf::from("apis").join(relative),
            relative: PathBuf::from(relative),
            text: text.to_owned(),
        }
    }

    const WIDGET: &str = r#"use super::types::Part;

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "shop.example.com", version = "v1", kind = "Widget", namespaced)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// +kubebuilder:validation:Maximum=5
    /// +kube-codegen:compat:acknowledge="was never released"
    pub max_size: i32,
    /// +kubebuilder:validation:items:MaxLength=9
    pub parts: Vec<Part>,
}
"#;

    const TYPES: &str = r#"/// +kubebuilder:validation:XValidation:rule="self.a != ''"
pub struct Part {
    pub a: String,
}
"#;

    fn tree() -> Vec<SourceFile> {
        vec![
            file(
                "shop/v1/mod.rs",
                "//! +groupName=shop.example.com\npub mod widget;\npub mod types;\n",
            ),
            file("shop/v1/types.rs", TYPES),
            file("shop/v1/widget.rs", WIDGET),
        ]
    }

    fn line_col(files: &[SourceFile], at: &super::At) -> (usize, usize, usize) {
        let d = crate::diag::Diagnostic {
            span: at.loc.span,
            doc_range: at.loc.doc_range.clone(),
            message: String::new(),
        };
        let pos = crate::render::position(&files[at.file], &d);
        (at.file, pos.line, pos.column)
    }

    #[test]
    fn every_path_knows_its_field_type_markers_and_acknowledgement() {
        let files = tree();
        let kinds = sources(&files, "crate::apis");
        assert_eq!(kinds.len(), 1);
        let k = &kinds[0];
        assert_eq!(
            (k.crd.as_str(), k.version.as_str()),
            ("widgets.shop.example.com", "v1")
        );
        let size = &k.paths["spec.maxSize"];
        assert_eq!(line_col(&files, size.field.as_ref().unwrap()), (2, 9, 9));
        assert_eq!(line_col(&files, size.ty.as_ref().unwrap()), (2, 9, 19));
        let (key, max) = &size.markers[0];
        assert_eq!(*key, "maximum");
        assert_eq!(line_col(&files, max), (2, 7, 41));
        let (reason, ack) = size.acknowledged.as_ref().unwrap();
        assert_eq!(reason, "was never released");
        assert_eq!(line_col(&files, ack).1, 8);
        // The items' marker sits on the list field; the struct below is in another file.
        let items = &k.paths["spec.parts[*]"];
        assert_eq!(items.markers[0].0, "maxLength");
        assert_eq!(
            line_col(&files, items.structure.as_ref().unwrap()),
            (1, 2, 12)
        );
        let (key, rule) = &items.markers[1];
        assert_eq!(*key, "x-kubernetes-validations");
        assert_eq!(line_col(&files, rule), (1, 1, 41));
        assert!(k.paths["spec.parts[*].a"].field.is_some());
        let group = k
            .crd_fields
            .iter()
            .find(|(p, _)| *p == "spec.group")
            .unwrap();
        assert_eq!(line_col(&files, &group.1), (2, 4, 16));
    }

    #[test]
    fn an_acknowledgement_is_a_known_marker_and_needs_a_reason() {
        assert!(crate::generate(&tree(), "crate::apis", "test", None).is_ok());
        for bad in ["=\"\"", "=", ""] {
            let text = WIDGET.replace(
                "acknowledge=\"was never released\"",
                &format!("acknowledge{bad}"),
            );
            let mut files = tree();
            files[2].text = text;
            let Err(crate::GenerateError::Diagnostics(errors)) =
                crate::generate(&files, "crate::apis", "test", None)
            else {
                panic!("an acknowledgement without a reason is an error ({bad})");
            };
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].starts_with("error: `+kube-codegen:compat:acknowledge` needs a reason: `+kube-codegen:compat:acknowledge=\"<why this breaking change is intended>\"`\n --> apis/shop/v1/widget.rs:8:"),
                "{}",
                errors[0]
            );
        }
        let mut files = tree();
        files[2].text = WIDGET.replace("compat:acknowledge", "compat:acknowledged");
        let Err(crate::GenerateError::Diagnostics(errors)) =
            crate::generate(&files, "crate::apis", "test", None)
        else {
            panic!("a misspelt acknowledgement is an error");
        };
        assert!(
            errors[0].contains("did you mean `+kube-codegen:compat:acknowledge`?"),
            "{}",
            errors[0]
        );
    }
}
