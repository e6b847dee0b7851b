//! Compile-fail cases: each mistake, its message and its span (`tests/ui/**/*.stderr`), and
//! the scope rules of the generated clients. Refresh with `TRYBUILD=overwrite` and review.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/markers/*.rs");
    t.compile_fail("ui/verbs/*.rs");
    t.compile_fail("ui/methods/*.rs");
    t.compile_fail("ui/kube/*.rs");
    t.compile_fail("ui/paths/*.rs");
    t.compile_fail("ui/crd/*.rs");
    t.compile_fail("ui/scope/*.rs");
    t.compile_fail("ui/apply/*.rs");
    t.compile_fail("ui/conversion/*.rs");
    t.pass("ui/pass/*.rs");
}
