//! Who writes and how: the context every write of the state carries.

use crate::options::FieldValidation;

/// Who writes and how: the field manager, dry-run, unknown-field handling, and the
/// warnings the request earned.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub(crate) manager: String,
    pub(crate) dry_run: bool,
    pub(crate) field_validation: FieldValidation,
    pub(crate) warnings: Vec<String>,
    /// What the CRD's conversion webhook has converted for this request.
    pub(crate) conversions: crate::conversion::Conversions,
}

impl Ctx {
    pub(crate) fn system() -> Self {
        Self::named("fake-apiserver")
    }

    /// Writes as field manager `manager`.
    pub fn named(manager: &str) -> Self {
        Self {
            manager: manager.to_owned(),
            dry_run: false,
            field_validation: FieldValidation::Ignore,
            warnings: Vec::new(),
            conversions: crate::conversion::Conversions::default(),
        }
    }
}
