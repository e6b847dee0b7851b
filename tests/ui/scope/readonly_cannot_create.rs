include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) {
    let bars = BarClient::new(client, "default", fm);
    let _ = bars.create(&Bar::new("b", BarSpec { size: 1 }), &Default::default()).await;
}

fn main() {}
