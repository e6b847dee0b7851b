include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) {
    let all = FooClient::all(client, fm);
    let _ = all.get("x").await;
}

fn main() {}
