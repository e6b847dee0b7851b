//! `+genclient:method` extension methods: names that do not shadow the client's own,
//! verbs and subresources Go's rules allow, and input and result types resolved (Go paths to
//! k8s-openapi ones).

use heck::ToSnakeCase;
use syn::Ident;

use super::{Method, MethodVerb, Origin, Resource, Verb};
use crate::attr::genclient::{Located, MethodAttr, TypeRef};
use crate::diag::{Ctxt, did_you_mean};
use crate::naming;

/// Method names the client already has, so extension methods cannot shadow them.
pub(super) fn generated_method_names(r: &Resource) -> Vec<(String, &'static str)> {
    let mut names: Vec<(String, &'static str)> = ["new", "all", "api", "field_manager", "handle"]
        .into_iter()
        .map(|n| (n.to_owned(), "every client has it"))
        .collect();
    for verb in &r.verbs {
        names.push((verb.rust_name().to_owned(), "a verb of the client"));
        if *verb == Verb::Get {
            names.push(("get_opt".to_owned(), "a verb of the client"));
        }
    }
    if r.has_scale {
        for (verb, name) in [
            (Verb::Get, "get_scale"),
            (Verb::Update, "update_scale"),
            (Verb::Patch, "patch_scale"),
        ] {
            if r.has(verb) {
                names.push((
                    name.to_owned(),
                    "generated for `scale(...)` in `#[kube]`, so this method is not needed",
                ));
            }
        }
    }
    names
}

/// One `+genclient:method`, checked against the client's other methods (`taken`, to which
/// its name is added) and the resource.
pub(super) fn method_from_attr(
    cx: &mut Ctxt,
    m: &MethodAttr,
    r: &Resource,
    taken: &mut Vec<(String, &'static str)>,
    origin: Origin,
) -> Option<Method> {
    let errors_before = cx.len();
    let Some(name) = &m.name else {
        cx.error_at(
            &m.loc,
            "`+genclient:method` needs a method name; write `+genclient:method=Name,verb=...`",
        );
        return None;
    };
    let snake = name.value.to_snake_case();
    if naming::module_segment(&snake).is_err() {
        cx.error_at(
            &name.loc,
            format!("`{}` is not a valid method name", name.value),
        );
        return None;
    }
    let ident = naming::ident(&snake);
    if let Some((_, why)) = taken.iter().find(|(n, _)| *n == snake) {
        let named = if snake == name.value {
            format!("method `{snake}`")
        } else {
            format!("method `{}` (`{snake}` in Rust)", name.value)
        };
        cx.error_at(
            &name.loc,
            format!(
                "{named} clashes with a method the client already has: {why}; choose another name"
            ),
        );
    }
    let Some(verb_text) = &m.verb else {
        cx.error_at(
            &m.loc,
            format!(
                "method `{}` needs `verb=`; one of create, update, get, list, patch, apply",
                name.value
            ),
        );
        return None;
    };
    let verb = match Verb::parse(&verb_text.value) {
        Some(v) if MethodVerb::from_verb(v).is_some() => v,
        Some(v) => {
            cx.error_at(
                &verb_text.loc,
                format!(
                    "verb `{}` is not supported in `+genclient:method`; use one of create, update, get, list, patch, apply",
                    v.go_name()
                ),
            );
            return None;
        }
        None => {
            cx.error_at(
                &verb_text.loc,
                format!(
                    "unknown verb `{}`{}",
                    verb_text.value,
                    did_you_mean(
                        &verb_text.value,
                        ["create", "update", "get", "list", "patch", "apply"]
                    )
                ),
            );
            return None;
        }
    };
    if let Some(input) = &m.input
        && !matches!(verb, Verb::Create | Verb::Update | Verb::Apply)
    {
        cx.error_at(
            &input.loc,
            format!(
                "`input` is only allowed for create, update and apply, not for `{}`",
                verb.go_name()
            ),
        );
    }
    let subresource = m.subresource.as_ref().map(|s| s.value.clone());
    if let Some(sub) = &m.subresource {
        check_subresource(cx, sub, verb, r);
    }
    let mut local_types = Vec::new();
    let input = m
        .input
        .as_ref()
        .and_then(|t| resolve_type(cx, t, &mut local_types, origin));
    let result = m
        .result
        .as_ref()
        .and_then(|t| resolve_type(cx, t, &mut local_types, origin));
    taken.push((snake, "another `+genclient:method`"));
    if cx.len() > errors_before {
        return None;
    }
    let verb = MethodVerb::from_verb(verb)?;
    Some(Method {
        name: ident,
        verb,
        subresource,
        input,
        result,
        local_types,
    })
}

fn check_subresource(cx: &mut Ctxt, sub: &Located<String>, verb: Verb, r: &Resource) {
    let valid = !sub.value.is_empty()
        && sub
            .value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'-');
    if !valid {
        cx.error_at(
            &sub.loc,
            format!(
                "`{}` is not a subresource name; use lowercase letters, as in `scale`",
                sub.value
            ),
        );
    } else if sub.value == "status" && !r.status_subresource {
        cx.error_at(
            &sub.loc,
            format!(
                "subresource `status` is not enabled; {}",
                super::no_status_subresource_fix(r)
            ),
        );
    } else if sub.value == "scale" && !r.has_scale {
        cx.error_at(
            &sub.loc,
            "subresource `scale` is not enabled; add `scale(...)` to `#[kube]` (or `+kubebuilder:subresource:scale:...` to the spec)",
        );
    } else if verb == Verb::List {
        cx.error_at(
            &sub.loc,
            "`list` methods cannot have a subresource; use `get` for a subresource of one object",
        );
    }
}

/// Turns `input=` / `result=` into a Rust type, translating Go paths of Kubernetes types.
fn resolve_type(
    cx: &mut Ctxt,
    t: &Located<TypeRef>,
    locals: &mut Vec<Ident>,
    origin: Origin,
) -> Option<syn::Type> {
    let ty = match &t.value {
        TypeRef::Rust(ty) => (**ty).clone(),
        TypeRef::Text(text) => {
            let rust = go_type_path(text).unwrap_or_else(|| text.clone());
            match syn::parse_str::<syn::Type>(&rust) {
                Ok(ty) => ty,
                Err(_) => {
                    cx.error_at(
                        &t.loc,
                        format!(
                            "`{text}` is not a type; write a Rust path (`k8s_openapi::api::autoscaling::v1::Scale`) or a Go one (`k8s.io/api/autoscaling/v1.Scale`)"
                        ),
                    );
                    return None;
                }
            }
        }
    };
    if let syn::Type::Path(p) = &ty
        && p.qself.is_none()
    {
        let first = p.path.segments.first().map(|s| s.ident.to_string());
        if p.path.leading_colon.is_none() && p.path.segments.len() == 1 {
            locals.push(p.path.segments[0].ident.clone());
        } else if origin == Origin::Cli && matches!(first.as_deref(), Some("self" | "super")) {
            cx.error_at(
                &t.loc,
                "relative type paths cannot be generated into another module; use a name from the API module or a `crate::` path",
            );
        }
    }
    Some(ty)
}

/// `k8s.io/api/autoscaling/v1.Scale` -> `::k8s_openapi::api::autoscaling::v1::Scale`.
fn go_type_path(text: &str) -> Option<String> {
    let (pkg, name) = text.rsplit_once('.')?;
    if !pkg.contains('/') {
        return None;
    }
    let module = if let Some(rest) = pkg.strip_prefix("k8s.io/api/") {
        format!("::k8s_openapi::api::{}", rest.replace('/', "::"))
    } else if let Some(rest) = pkg.strip_prefix("k8s.io/apimachinery/") {
        format!("::k8s_openapi::apimachinery::{}", rest.replace('/', "::"))
    } else {
        return None;
    };
    Some(format!("{module}::{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_paths_become_k8s_openapi_paths() {
        assert_eq!(
            go_type_path("k8s.io/api/autoscaling/v1.Scale").as_deref(),
            Some("::k8s_openapi::api::autoscaling::v1::Scale")
        );
        assert_eq!(
            go_type_path("k8s.io/apimachinery/pkg/apis/meta/v1.Status").as_deref(),
            Some("::k8s_openapi::apimachinery::pkg::apis::meta::v1::Status")
        );
        assert_eq!(go_type_path("Scale"), None);
    }
}
