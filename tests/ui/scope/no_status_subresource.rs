include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) {
    let machines = MachineClient::new(client, fm);
    let _ = machines.update_status(&Machine::new("m", MachineSpec { rack: "r".into() }), &Default::default()).await;
    // Nor through the client's field: the runtime's client has the same bounds.
    let _ = machines.0.update_status(&Machine::new("m", MachineSpec { rack: "r".into() }), &Default::default()).await;
}

fn main() {}
