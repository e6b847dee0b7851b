include!("../support/scope_prelude.rs");

#[allow(unused)]
fn scenario(factory: &kube_codegen_runtime::SharedInformerFactory) {
    // A namespaced kind's lister gets objects through its namespace view only.
    let _ = FooInformer::new(factory).lister().get("x");
}

fn main() {}
