//! Package markers in a version module's inner docs: `//! +groupName=` and `//! +groupGoName=`.

use syn::Attribute;

use super::genclient::{Located, for_each_marker};
use crate::diag::{Ctxt, suggest};

/// The package markers of one API version module.
#[derive(Debug, Clone, Default)]
pub(crate) struct PackageAttrs {
    /// `+groupName=samplecontroller.k8s.io`.
    pub(crate) group_name: Option<Located<String>>,
    /// `+groupGoName=Samplecontroller`: overrides the name of the group accessor.
    pub(crate) group_go_name: Option<Located<String>>,
    /// `+kubebuilder:ac:generate=true`: apply configurations for every kind of the version.
    pub(crate) apply_configurations: bool,
}

impl PackageAttrs {
    /// Reads the markers among a module's inner attributes (`//!` comments).
    pub(crate) fn from_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Self {
        let mut out = PackageAttrs::default();
        for_each_marker(attrs, |text, loc| {
            let body = &text[1..];
            let (name, value) = body.split_once('=').unwrap_or((body, ""));
            if name == "kubebuilder:ac:generate" {
                out.apply_configurations = value == "true";
                return;
            }
            let slot = match name {
                "groupName" => &mut out.group_name,
                "groupGoName" => &mut out.group_go_name,
                _ => {
                    if let Some(s) = suggest(name, ["groupName", "groupGoName"]) {
                        cx.error_at(
                            &loc(0, 1 + name.len()),
                            format!("unknown marker `+{name}`; did you mean `+{s}`?"),
                        );
                    }
                    return;
                }
            };
            let whole = loc(0, text.len());
            if value.is_empty() {
                cx.error_at(
                    &whole,
                    format!("`+{name}` needs a value; write `+{name}=<value>`"),
                );
            } else if slot.is_some() {
                cx.error_at(&whole, format!("duplicate marker `+{name}`"));
            } else {
                *slot = Some(Located {
                    value: value.to_owned(),
                    loc: whole,
                });
            }
        });
        out
    }
}
