include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) {
    let machines = MachineClient::new(client, "default", fm);
}

fn main() {}
