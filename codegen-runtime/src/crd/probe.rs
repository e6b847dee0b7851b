//! How the `GenClient` derive reaches the markers of the structs a spec uses.
//!
//! A derive sees one item. A struct below the spec (or the status) that carries markers
//! derives [`CrdMarkers`]; the spec's generated code asks every field type for its patches
//! with `(&&Probe::<T>::new()).crd_markers(at, out)`, which finds the `CrdMarkers` impl when
//! there is one and adds nothing otherwise (autoref specialization: the call sites name
//! concrete types, and the impl for `&Probe<T>` is tried before the one for `Probe<T>`). Marker lines in a
//! struct without the derive are reported when the CRD is built, never dropped in silence.

use std::marker::PhantomData;

use super::Patches;

/// The CRD markers of a struct, for the structs that contain it. Derive it with
/// `#[derive(CrdMarkers)]` on any struct below a spec or status that carries
/// `+kubebuilder:` markers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not derive `CrdMarkers`",
    label = "add `#[derive(CrdMarkers)]` to `{Self}`"
)]
pub trait CrdMarkers {
    /// Adds this struct's patches, and those of the structs below it, at `at` (the path of
    /// the field holding it).
    fn crd_markers(at: &[&str], out: &mut Patches);
}

/// A type to ask for markers; see the module docs.
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T: ?Sized> Probe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        Probe(PhantomData)
    }
}

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Chosen when `T` derives `CrdMarkers`.
pub trait WithMarkers {
    /// `T`'s patches at `at`.
    fn crd_markers(&self, at: &[&str], out: &mut Patches);
}

impl<T: CrdMarkers + ?Sized> WithMarkers for &Probe<T> {
    fn crd_markers(&self, at: &[&str], out: &mut Patches) {
        out.nested(|out| T::crd_markers(at, out));
    }
}

/// Chosen for every other type: nothing to add.
pub trait WithoutMarkers {
    /// Nothing.
    fn crd_markers(&self, at: &[&str], out: &mut Patches);
}

impl<T: ?Sized> WithoutMarkers for Probe<T> {
    fn crd_markers(&self, _: &[&str], _: &mut Patches) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Marked;
    impl CrdMarkers for Marked {
        fn crd_markers(at: &[&str], out: &mut Patches) {
            out.add(at, &[super::super::Patch::Read { path: &[] }]);
        }
    }
    struct Plain;

    #[test]
    // The two borrows are the point: they make the `&Probe<T>` impl win when it applies.
    #[allow(clippy::needless_borrow)]
    fn the_probe_finds_the_impl_when_there_is_one() {
        let mut out = Patches::default();
        (&&Probe::<Marked>::new()).crd_markers(&["spec", "m"], &mut out);
        (&&Probe::<Plain>::new()).crd_markers(&["spec", "p"], &mut out);
        (&&Probe::<i32>::new()).crd_markers(&["spec", "i"], &mut out);
        let paths: Vec<&Vec<String>> = out.placed.iter().map(|(at, _)| at).collect();
        assert_eq!(paths, [&vec!["spec".to_owned(), "m".to_owned()]]);
    }
}
