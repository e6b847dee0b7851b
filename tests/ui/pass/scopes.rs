// What the scope cases forbid has an allowed counterpart; it all compiles.
include!("../support/scope_prelude.rs");

#[allow(unused)]
async fn scenario(client: kube::Client, fm: kube_codegen_runtime::FieldManager) -> kube::Result<()> {
    let foos = FooClient::new(client.clone(), "default", fm.clone());
    let foo = foos.get("x").await?;
    foos.apply_status_object("x", &FooStatus { ready: true }).await?;
    let all = FooClient::all(client.clone(), fm.clone());
    let _list = all.list(&Default::default()).await?;
    let machines = MachineClient::new(client.clone(), fm.clone());
    let _machine = machines.get("m").await?;
    let bars = BarClient::new(client, "default", fm);
    let _bar = bars.get_opt("b").await?;
    let _ = foo;
    Ok(())
}

fn main() {}
