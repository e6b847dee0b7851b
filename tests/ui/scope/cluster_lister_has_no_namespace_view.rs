include!("../support/scope_prelude.rs");

#[allow(unused)]
fn scenario(factory: &kube_codegen_runtime::SharedInformerFactory) {
    let _ = MachineInformer::new(factory).lister().machines("default");
}

fn main() {}
