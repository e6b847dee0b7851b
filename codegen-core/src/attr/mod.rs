//! Raw attributes: what the user wrote, read into typed values but not yet validated.

pub(crate) mod genclient;
pub(crate) mod kube;
pub(crate) mod marker;
pub(crate) mod package;
pub(crate) mod reference;
