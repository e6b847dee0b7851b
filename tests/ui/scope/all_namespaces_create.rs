include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) {
    let all = FooClient::all(client, fm);
    let foo = Foo::new("x", FooSpec { replicas: 1 });
    let _ = all.create(&foo, &Default::default()).await;
}

fn main() {}
