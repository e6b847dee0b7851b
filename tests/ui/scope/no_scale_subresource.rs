include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) {
    let foos = FooClient::new(client, "default", fm);
    let _ = foos.get_scale("x").await;
}

fn main() {}
