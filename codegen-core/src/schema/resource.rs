//! The markers of a resource's spec struct that change the CRD as a whole (names,
//! subresources, printer columns, versions, selectable fields, metadata): a table from
//! marker name to the function that checks it against `#[kube]` and the Rust types and
//! turns it into a [`Patch`].

use quote::ToTokens;
use serde_json::{Map, Value, json};
use syn::ItemStruct;

use super::Patch;
use crate::ast::{self, Structs};
use crate::attr::kube::{KubeAttrs, Spanned};
use crate::attr::marker::{self, Marker};
use crate::check;
use crate::diag::{Ctxt, did_you_mean};
use crate::model::{Resource, Scope};

/// What a resource marker is checked against.
pub(super) struct Context<'a> {
    /// The spec's `#[kube]`.
    pub(crate) kube: &'a KubeAttrs,
    /// The validated resource.
    pub(crate) resource: &'a Resource,
    /// The spec struct.
    pub(crate) spec: &'a ItemStruct,
    /// The status struct, when found.
    pub(crate) status: Option<&'a ItemStruct>,
    /// Where named types are defined.
    pub(crate) structs: &'a Structs<'a>,
}

impl Context<'_> {
    /// Resolves the path in `arg` against the spec and status structs; a mistake is
    /// reported at the marker's argument.
    fn path<'t>(&'t self, cx: &mut Ctxt, arg: &marker::Arg, what: &str) -> Option<&'t syn::Type> {
        self.resolve(cx, arg, what, None)
    }

    /// [`Context::path`] for a printer column: kube-apiserver takes any JSONPath there (the
    /// column is empty where it finds nothing), so a path naming no field is a warning.
    fn column_path<'t>(
        &'t self,
        cx: &mut Ctxt,
        arg: &marker::Arg,
        what: &str,
    ) -> Option<&'t syn::Type> {
        self.resolve(cx, arg, what, Some(check::KEPT_COLUMN))
    }

    /// [`Context::path`] for a scale path: kube-apiserver takes any path there too.
    fn scale_path<'t>(&'t self, cx: &mut Ctxt, arg: &marker::Arg) -> Option<&'t syn::Type> {
        self.resolve(cx, arg, "scale path", Some(check::KEPT_SCALE))
    }

    fn resolve<'t>(
        &'t self,
        cx: &mut Ctxt,
        arg: &marker::Arg,
        what: &str,
        kept: Option<&str>,
    ) -> Option<&'t syn::Type> {
        let spanned = Spanned {
            value: arg.value.clone(),
            span: arg.loc.span,
        };
        let mut inner = Ctxt::new();
        let roots = check::Roots {
            spec: self.spec,
            status: self.status,
            structs: self.structs,
            no_spec: self.kube.no_spec.is_some(),
        };
        let ty = check::resolve(&mut inner, &spanned, &roots, what, kept);
        for d in inner.take_warnings() {
            cx.warn_at(&arg.loc, d.message);
        }
        for d in inner.into_diagnostics() {
            cx.error_at(&arg.loc, d.message);
        }
        ty
    }

    /// Reports a key `m` does not have.
    fn unknown(&self, cx: &mut Ctxt, m: &Marker, arg: &marker::Arg, keys: &[&str]) {
        cx.error_at(
            &arg.loc,
            format!(
                "unknown key `{}` in `{}`{}",
                arg.key,
                m.display(),
                did_you_mean(&arg.key, keys.iter().copied())
            ),
        );
    }
}

/// What a resource marker becomes: a patch, or `None` (nothing, or a mistake reported).
type Apply = fn(&Context<'_>, &mut Ctxt, &Marker) -> Option<Patch>;

/// Resource markers by name, and what each becomes.
const MARKERS: &[(&str, Apply)] = &[
    ("kubebuilder:resource", resource_names),
    ("kubebuilder:metadata:annotations", metadata),
    ("kubebuilder:metadata:labels", metadata),
    ("kubebuilder:subresource:status", status_subresource),
    ("kubebuilder:subresource:scale", scale_subresource),
    ("kubebuilder:printcolumn", printcolumn),
    ("kubebuilder:unservedversion", unserved),
    ("kubebuilder:deprecatedversion", deprecated),
    ("kubebuilder:selectablefield", selectable_field),
    ("kube-codegen:noStatusSubresource", no_status_subresource),
    ("kube-codegen:listKind", list_kind),
    ("kube-codegen:rootRequired", root_required),
];

/// The patch a resource marker makes to the CRD (`None`: none, or a mistake reported).
pub(super) fn patch(cx: &mut Ctxt, m: &Marker, c: &Context<'_>) -> Option<Patch> {
    let (_, apply) = MARKERS.iter().find(|(name, _)| *name == m.name)?;
    apply(c, cx, m)
}

/// `+kubebuilder:resource`: names, categories and scope, checked against `#[kube]`.
fn resource_names(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    let mut names_patch = Map::new();
    for arg in &m.args {
        match arg.key.as_str() {
            "shortName" => {
                let v = names(&arg.value);
                conflict(cx, arg, &v, &c.kube.shortnames, "shortname");
                names_patch.insert("shortNames".into(), json!(v));
            }
            "categories" => {
                let v = names(&arg.value);
                conflict(cx, arg, &v, &c.kube.categories, "category");
                names_patch.insert("categories".into(), json!(v));
            }
            "singular" => {
                conflict(
                    cx,
                    arg,
                    std::slice::from_ref(&arg.value),
                    c.kube.singular.as_slice(),
                    "singular",
                );
                names_patch.insert("singular".into(), json!(arg.value));
            }
            "path" => {
                if arg.value != c.resource.plural {
                    cx.error_at(&arg.loc, format!("`path={}` differs from the plural the client uses, `{}`; set `plural = \"{}\"` in `#[kube]` so both agree", arg.value, c.resource.plural, arg.value));
                }
            }
            "scope" => {
                let want = match arg.value.as_str() {
                    "Namespaced" => Scope::Namespaced,
                    "Cluster" => Scope::Cluster,
                    other => {
                        cx.error_at(
                            &arg.loc,
                            format!("`scope={other}` is `Namespaced` or `Cluster`"),
                        );
                        continue;
                    }
                };
                if want != c.resource.scope {
                    let fix = if want == Scope::Namespaced {
                        "add `namespaced` to `#[kube]`"
                    } else {
                        "remove `namespaced` from `#[kube]`"
                    };
                    cx.error_at(&arg.loc, format!("`scope={}` conflicts with the Rust type's scope; {fix} so the type and the CRD agree", arg.value));
                }
            }
            _ => c.unknown(
                cx,
                m,
                arg,
                &["path", "shortName", "categories", "scope", "singular"],
            ),
        }
    }
    if names_patch.is_empty() {
        return None;
    }
    Some(Patch::Merge {
        pointer: "/spec/names",
        value: Value::Object(names_patch),
    })
}

/// `+kubebuilder:metadata:annotations` / `labels`: the CRD's own metadata.
fn metadata(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    let (field, from_kube, attr) = if m.name.ends_with("annotations") {
        ("annotations", &c.kube.annotations, "annotation")
    } else {
        ("labels", &c.kube.labels, "label")
    };
    let entries = match metadata_entries(m.value.as_deref().unwrap_or("")) {
        Ok(e) => e,
        Err(why) => {
            cx.error_at(
                &m.value_loc,
                format!(
                    "`{}`: {why}; write `{}=\"key=value\"`",
                    m.display(),
                    m.display()
                ),
            );
            return None;
        }
    };
    let mut map = Map::new();
    for (k, v) in entries {
        if let Some((_, other)) = from_kube.iter().find(|(kk, _)| kk.value == k)
            && other.value != v
        {
            cx.error_at(
                &m.value_loc,
                format!(
                    "`{k}={v}` conflicts with `#[kube({attr}(\"{k}\", \"{}\"))]`; keep one",
                    other.value
                ),
            );
        }
        map.insert(k, Value::from(v));
    }
    let mut value = Map::new();
    value.insert(field.to_owned(), Value::Object(map));
    Some(Patch::Merge {
        pointer: "/metadata",
        value: Value::Object(value),
    })
}

/// `+kubebuilder:subresource:status`.
fn status_subresource(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    if c.kube.status.is_none() {
        cx.error_at(&m.name_loc, "`+kubebuilder:subresource:status` needs a status type: add `status = \"<Type>\"` to `#[kube]`");
        return None;
    }
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value: json!({"subresources": {"status": {}}}),
    })
}

/// `+kubebuilder:subresource:scale`: paths checked against the spec and status.
fn scale_subresource(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    if let Some(scale) = &c.kube.scale {
        // The same paths as `#[kube(scale(...))]` say nothing new; kube writes them.
        let pairs = [
            ("specpath", &scale.spec_replicas_path),
            ("statuspath", &scale.status_replicas_path),
            ("selectorpath", &scale.label_selector_path),
        ];
        for (key, kube_value) in pairs {
            let marker_value = m.arg(key).map(|a| a.value.as_str());
            let kube_value = kube_value.as_ref().map(|v| v.value.as_str());
            if marker_value != kube_value {
                let at = m.arg(key).map_or(&m.name_loc, |a| &a.loc);
                cx.error_at(
                    at,
                    format!(
                        "`{key}={}` differs from `#[kube(scale(...))]` ({}); keep one",
                        marker_value.unwrap_or(""),
                        kube_value.map_or("not set".to_owned(), |v| format!("`{v}`"))
                    ),
                );
            }
        }
        return None;
    }
    if c.kube.status.is_none() {
        cx.error_at(&m.name_loc, "`+kubebuilder:subresource:scale` needs the status subresource: add `status = \"<Type>\"` to `#[kube]`");
        return None;
    }
    let mut scale = Map::new();
    for arg in &m.args {
        let key = match arg.key.as_str() {
            "specpath" => "specReplicasPath",
            "statuspath" => "statusReplicasPath",
            "selectorpath" => "labelSelectorPath",
            _ => {
                c.unknown(cx, m, arg, &["specpath", "statuspath", "selectorpath"]);
                continue;
            }
        };
        c.scale_path(cx, arg);
        scale.insert(key.into(), Value::from(arg.value.clone()));
    }
    for (key, arg) in [
        ("specReplicasPath", "specpath"),
        ("statusReplicasPath", "statuspath"),
    ] {
        if !scale.contains_key(key) {
            cx.error_at(
                &m.name_loc,
                format!("`+kubebuilder:subresource:scale` needs `{arg}=`"),
            );
        }
    }
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value: json!({"subresources": {"scale": scale}}),
    })
}

/// `+kube-codegen:noStatusSubresource`: the status kube writes stays a plain field, and the
/// status subresource kube adds with it is taken out (a scale subresource stays).
fn no_status_subresource(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    if c.kube.status.is_none() {
        cx.error_at(&m.name_loc, "`+kube-codegen:noStatusSubresource` keeps a status a plain field, but there is no status: add `status = \"<Type>\"` to `#[kube]`, or remove the marker");
        return None;
    }
    // Null removes (a merge patch's rule): the status alone when a scale stays, else all.
    let value = if c.resource.has_scale {
        json!({"subresources": {"status": null}})
    } else {
        json!({"subresources": null})
    };
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value,
    })
}

/// `+kube-codegen:listKind=FooList`: the CRD's `names.listKind` as the API server checks it.
fn list_kind(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    let value = m.value.as_deref().unwrap_or("");
    let errors = apiserver_rules::names::dns1035_label(&value.to_ascii_lowercase());
    if !errors.is_empty() {
        cx.error_at(
            &m.value_loc,
            format!(
                "`listKind` `{value}` may have mixed case, but should otherwise match: {}",
                errors.join(",")
            ),
        );
        return None;
    }
    if value == c.resource.kind {
        cx.error_at(
            &m.value_loc,
            "kind and listKind may not be the same; leave the marker out for the default `<Kind>List`",
        );
        return None;
    }
    Some(Patch::Merge {
        pointer: "/spec/names",
        value: json!({ "listKind": value }),
    })
}

/// `+kube-codegen:rootRequired=metadata;kind`: root properties kube writes itself, in the
/// root schema's `required` (the spec's own fields are required as the Rust type says).
fn root_required(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    const ROOT: &[&str] = &["apiVersion", "kind", "metadata", "status"];
    let list = names(m.value.as_deref().unwrap_or(""));
    for name in &list {
        if !ROOT.contains(&name.as_str()) {
            cx.error_at(
                &m.value_loc,
                format!(
                    "`{name}` is not a root property kube writes itself; `+kube-codegen:rootRequired` takes `apiVersion`, `kind`, `metadata` and `status`{}",
                    did_you_mean(name, ROOT.iter().copied())
                ),
            );
            return None;
        }
        if name == "status" && c.kube.status.is_none() {
            cx.error_at(
                &m.value_loc,
                "`status` is required, but there is no status: add `status = \"<Type>\"` to `#[kube]`",
            );
            return None;
        }
    }
    if list.is_empty() {
        cx.error_at(&m.value_loc, "`+kube-codegen:rootRequired` needs property names: `+kube-codegen:rootRequired=metadata`");
        return None;
    }
    Some(Patch::Merge {
        pointer: "/spec/versions/0/schema/openAPIV3Schema",
        value: json!({ "required": list }),
    })
}

/// `+kubebuilder:printcolumn`: a printer column whose path and type fit the fields.
fn printcolumn(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    let mut column = Map::new();
    let mut json_path = None;
    for arg in &m.args {
        match arg.key.as_str() {
            "name" => {
                if c.kube
                    .printcolumns
                    .iter()
                    .any(|c| c.name.as_ref().is_some_and(|n| n.value == arg.value))
                {
                    cx.error_at(&arg.loc, format!("printer column `{}` is given twice: in `#[kube(printcolumn(...))]` and as a marker; keep one", arg.value));
                }
                column.insert("name".into(), Value::from(arg.value.clone()));
            }
            "type" => {
                let types = ["integer", "number", "string", "boolean", "date"];
                if !types.contains(&arg.value.as_str()) {
                    cx.error_at(
                        &arg.loc,
                        format!(
                            "printer column type `{}` is not one of {}{}",
                            arg.value,
                            types.join(", "),
                            did_you_mean(&arg.value, types)
                        ),
                    );
                }
                column.insert("type".into(), Value::from(arg.value.clone()));
            }
            "JSONPath" => {
                json_path = Some(arg);
                column.insert("jsonPath".into(), Value::from(arg.value.clone()));
            }
            "description" | "format" => {
                column.insert(arg.key.clone(), Value::from(arg.value.clone()));
            }
            "priority" => match arg.value.parse::<i32>() {
                Ok(p) => {
                    column.insert("priority".into(), Value::from(p));
                }
                Err(_) => cx.error_at(&arg.loc, "`priority` is an integer"),
            },
            _ => c.unknown(
                cx,
                m,
                arg,
                &[
                    "name",
                    "type",
                    "JSONPath",
                    "description",
                    "format",
                    "priority",
                ],
            ),
        }
    }
    for key in ["name", "type", "jsonPath"] {
        if !column.contains_key(key) {
            let written = if key == "jsonPath" { "JSONPath" } else { key };
            cx.error_at(
                &m.name_loc,
                format!("`+kubebuilder:printcolumn` needs `{written}=`"),
            );
            return None;
        }
    }
    if let Some(arg) = json_path
        && let Some(ty) = c.column_path(cx, arg, "printcolumn JSONPath")
        && let Some(Value::String(t)) = column.get("type")
        && !check::fits(t, ty, c.structs)
    {
        // kube-apiserver accepts any type for any path: a warning, the column kept as written.
        cx.warn_at(
            &arg.loc,
            format!(
                "printer column type `{t}` does not fit `{}` (`{}`); kube-apiserver accepts it as written",
                arg.value,
                ast::inner(ty)
                    .to_token_stream()
                    .to_string()
                    .replace(' ', "")
            ),
        );
    }
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value: json!({"additionalPrinterColumns": [column]}),
    })
}

/// `+kubebuilder:unservedversion`.
fn unserved(_: &Context<'_>, _: &mut Ctxt, _: &Marker) -> Option<Patch> {
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value: json!({"served": false}),
    })
}

/// `+kubebuilder:deprecatedversion`, with its warning.
fn deprecated(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    let mut version = Map::new();
    version.insert("deprecated".into(), Value::from(true));
    for arg in &m.args {
        if arg.key == "warning" {
            version.insert("deprecationWarning".into(), Value::from(arg.value.clone()));
        } else {
            c.unknown(cx, m, arg, &["warning"]);
        }
    }
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value: Value::Object(version),
    })
}

/// `+kubebuilder:selectablefield`: a path that names a field.
fn selectable_field(c: &Context<'_>, cx: &mut Ctxt, m: &Marker) -> Option<Patch> {
    let arg = m.arg("JSONPath");
    let Some(arg) = arg else {
        cx.error_at(
            &m.name_loc,
            "`+kubebuilder:selectablefield` needs `JSONPath=`",
        );
        return None;
    };
    if c.kube.selectable.iter().any(|s| s.value == arg.value) {
        cx.error_at(&arg.loc, format!("selectable field `{}` is given twice: in `#[kube(selectable = ...)]` and as a marker; keep one", arg.value));
        return None;
    }
    c.path(cx, arg, "selectable field");
    Some(Patch::Merge {
        pointer: "/spec/versions/0",
        value: json!({"selectableFields": [{"jsonPath": arg.value}]}),
    })
}

/// `"a=b";"c=d"` (controller-gen's list form; quotes optional) as key/value pairs.
fn metadata_entries(value: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut items = Vec::new();
    for c in value.chars() {
        match c {
            '"' => quoted = !quoted,
            ';' if !quoted => items.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if quoted {
        return Err("an unterminated quote".to_owned());
    }
    items.push(current);
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("`{item}` is not `key=value`"));
        };
        if k.trim().is_empty() {
            return Err(format!("`{item}` has no key"));
        }
        out.push((k.trim().to_owned(), v.to_owned()));
    }
    if out.is_empty() {
        return Err("no `key=value` given".to_owned());
    }
    Ok(out)
}

fn names(value: &str) -> Vec<String> {
    value
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(ToOwned::to_owned)
        .collect()
}

fn conflict(
    cx: &mut Ctxt,
    arg: &marker::Arg,
    marker_says: &[String],
    kube_says: &[Spanned<String>],
    key: &str,
) {
    if kube_says.is_empty() {
        return;
    }
    let mut a: Vec<&str> = marker_says.iter().map(String::as_str).collect();
    let mut b: Vec<&str> = kube_says.iter().map(|s| s.value.as_str()).collect();
    a.sort_unstable();
    b.sort_unstable();
    if a != b {
        cx.error_at(
            &arg.loc,
            format!(
                "`{}={}` conflicts with `#[kube({key} = ...)]` ({}); keep one",
                arg.key,
                marker_says.join(";"),
                b.join(", ")
            ),
        );
    }
}
