//! Scopes and verb filters: nonNamespaced, noStatus, readonly, onlyVerbs, skipVerbs, noVerbs,
//! resourceName.
pub mod filters;
