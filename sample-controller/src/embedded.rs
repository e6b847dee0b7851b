//! Embedded mode: the controllers on the in-memory API server, with a stand-in for the
//! cluster's Deployment controller and scheduler, so a newcomer sees them work in one command.

use std::collections::BTreeMap;
use std::time::Duration;

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use serde_json::json;
use tokio::sync::oneshot;

use crate::apis::samplecontroller::v1alpha1::{Flavor, Foo, FooSpec, Icecream, IcecreamSpec};
use crate::run::{self, Options, anyhow_free::Result, shutdown_signal};

/// Nodes the stand-in scheduler places pods on.
const NODES: [&str; 2] = ["node-a", "node-b"];

/// Runs the demo: install the CRDs, create the example Foo and Icecream, watch the
/// controllers converge, scale the Foo, print what happened, shut down.
pub async fn demo(mut options: Options) -> Result<()> {
    let fake = FakeApiServer::new();
    // Foo's admission webhooks, served in process with a development certificate and
    // installed on the in-memory server, which calls them as a cluster would.
    // The key goes into a directory of the process's own (random name, owner-only, removed
    // when the demo ends), never a predictable path someone could plant a link at.
    let cert_dir = kube_codegen_runtime::webhook::dev::PrivateDir::new("sample-controller")?;
    options.webhooks.get_or_insert(run::WebhookOptions {
        addr: ([127, 0, 0, 1], 0).into(),
        cert_dir: Some(cert_dir.path().to_owned()),
        install: true,
    });
    for crd in crate::generated::crds()? {
        let name = crd.metadata.name.clone().unwrap_or_default();
        fake.seed(crd).map_err(|e| e.message)?;
        println!("installed CRD {name}");
    }
    let client = Client::new(fake.clone(), "default");
    let (stop, stopped) = oneshot::channel::<()>();
    let controller = tokio::spawn(run::run(
        client.clone(),
        options,
        shutdown_signal(async move {
            let _ = stopped.await;
        }),
    ));
    let stand_in = tokio::spawn(stand_in(client.clone()));

    let foos: Api<Foo> = Api::default_namespaced(client.clone());
    let icecreams: Api<Icecream> = Api::default_namespaced(client.clone());
    let foo = Foo::new(
        "example-foo",
        FooSpec {
            deployment_name: "example-foo".into(),
            replicas: Some(1),
        },
    );
    foos.create(&PostParams::default(), &foo).await?;
    println!("created Foo example-foo (deploymentName example-foo, replicas 1)");
    let icecream = Icecream::new(
        "example-icecream",
        IcecreamSpec {
            deployment_name: "example-icecream".into(),
            replicas: Some(2),
            flavor: Flavor::Vanilla,
        },
    );
    icecreams.create(&PostParams::default(), &icecream).await?;
    println!(
        "created Icecream example-icecream (deploymentName example-icecream, replicas 2, flavor Vanilla)"
    );

    wait_for("the controllers to converge", || async {
        let foo = foos.get("example-foo").await.ok()?;
        let ice = icecreams.get("example-icecream").await.ok()?;
        (foo.status?.available_replicas == 1 && ice.status?.nodes.len() == 2).then_some(())
    })
    .await?;
    report(&client, &foos, &icecreams).await?;

    println!("\nscaling Foo example-foo to 3 replicas");
    foos.patch(
        "example-foo",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await?;
    wait_for("Foo example-foo to report 3 available replicas", || async {
        (foos
            .get("example-foo")
            .await
            .ok()?
            .status?
            .available_replicas
            == 3)
            .then_some(())
    })
    .await?;
    let d: Api<Deployment> = Api::default_namespaced(client.clone());
    let replicas = d.get("example-foo").await?.spec.replicas.unwrap_or(0);
    println!(
        "Deployment example-foo now has {replicas} replicas; Foo example-foo reports 3 available"
    );

    webhooks(&fake, &foos).await?;
    conversion(&client).await?;

    let _ = stop.send(());
    let metrics = controller.await??;
    drop(cert_dir);
    stand_in.abort();
    println!(
        "\nstopped gracefully after {} Foo and {} Icecream reconciles ({} errors); {} writes reached the API server",
        metrics.reconciles_total("foo"),
        metrics.reconciles_total("icecream"),
        metrics.reconcile_errors("foo") + metrics.reconcile_errors("icecream"),
        fake.writes().len()
    );
    Ok(())
}

/// A Foo whose empty `deploymentName` the defaulting webhook fills in, and one the
/// validating webhook refuses because its Deployment belongs to another Foo.
async fn webhooks(fake: &FakeApiServer, foos: &Api<Foo>) -> Result<()> {
    wait_for("the webhook configurations to be installed", || async {
        (!fake
            .list(
                "admissionregistration.k8s.io/v1",
                "ValidatingWebhookConfiguration",
                None,
            )
            .is_empty())
        .then_some(())
    })
    .await?;
    println!("\nadmission webhooks (served in process; the API server calls them):");
    let spec = |name: &str| FooSpec {
        deployment_name: name.into(),
        replicas: Some(1),
    };
    let web = foos
        .create(&PostParams::default(), &Foo::new("web", spec("")))
        .await?;
    println!(
        "  created Foo web with deploymentName \"\": the defaulting webhook made it \"{}\"",
        web.spec.deployment_name
    );
    match foos
        .create(
            &PostParams::default(),
            &Foo::new("thief", spec("example-foo")),
        )
        .await
    {
        Err(kube::Error::Api(status)) => println!(
            "  Foo thief naming Deployment example-foo was refused ({}): {}",
            status.code, status.message
        ),
        Ok(_) => return Err("the validating webhook let Foo thief take example-foo".into()),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// Foo in v1beta1, through the generated client: the in-memory server converts through the
/// conversion webhook the controller serves.
async fn conversion(client: &Client) -> Result<()> {
    use crate::apis::samplecontroller::v1beta1;
    let clients = crate::generated::Clientset::new(
        client.clone(),
        kube_codegen_runtime::FieldManager::new("sample-demo"),
    );
    let beta = clients.samplecontroller_v1beta1().foos("default");
    println!("\nconversion webhook (v1alpha1 is stored; v1beta1 nests the Deployment):");
    let read = beta.get("example-foo").await?;
    println!(
        "  Foo example-foo read as v1beta1: spec.deployment = {}",
        serde_json::to_string(&read.spec.deployment)?
    );
    let spec = v1beta1::FooSpec {
        deployment: v1beta1::FooDeployment {
            name: "nested".into(),
            replicas: Some(1),
        },
        note: Some("only v1beta1 has notes".into()),
    };
    beta.create(&v1beta1::Foo::new("nested", spec), &PostParams::default())
        .await?;
    let foos: Api<Foo> = Api::default_namespaced(client.clone());
    let stored = foos.get("nested").await?;
    println!(
        "  Foo nested created as v1beta1, read as v1alpha1: deploymentName \"{}\", replicas {}",
        stored.spec.deployment_name,
        stored.spec.replicas.unwrap_or(0)
    );
    let again = beta.get("nested").await?;
    println!(
        "  and read as v1beta1 again: note {:?} (kept in an annotation of the v1alpha1 object)",
        again.spec.note.unwrap_or_default()
    );
    Ok(())
}

async fn report(client: &Client, foos: &Api<Foo>, icecreams: &Api<Icecream>) -> Result<()> {
    println!("\nwhat happened:");
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    for d in deployments.list(&ListParams::default()).await? {
        let owner = d
            .owner_references()
            .first()
            .map(|o| format!("{} {}", o.kind, o.name))
            .unwrap_or_default();
        println!(
            "  Deployment {:<18} replicas {}  owned by {owner}",
            d.name_any(),
            d.spec.replicas.unwrap_or(0)
        );
    }
    let foo = foos.get("example-foo").await?;
    println!(
        "  Foo example-foo status: {}",
        serde_json::to_string(&foo.status)?
    );
    let ice = icecreams.get("example-icecream").await?;
    println!(
        "  Icecream example-icecream status: {}",
        serde_json::to_string(&ice.status)?
    );
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::default_namespaced(client.clone());
    for e in events.list(&ListParams::default()).await? {
        let regarding = e.regarding.as_ref().map(|r| {
            format!(
                "{} {}",
                r.kind.clone().unwrap_or_default(),
                r.name.clone().unwrap_or_default()
            )
        });
        println!(
            "  Event {:<7} {:<8} {:<26} {}",
            e.type_.unwrap_or_default(),
            e.reason.unwrap_or_default(),
            regarding.unwrap_or_default(),
            e.note.unwrap_or_default()
        );
    }
    Ok(())
}

async fn wait_for<F, Fut>(what: &str, mut check: F) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<()>>,
{
    for _ in 0..300 {
        if check().await.is_some() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("timed out waiting for {what}").into())
}

/// Stands in for the kube-controller-manager and scheduler, which the fake API server does
/// not run: every Deployment gets `replicas` Running pods spread over two nodes, and its
/// status reports them available.
pub async fn stand_in(client: Client) {
    let deployments: Api<Deployment> = Api::all(client.clone());
    loop {
        if let Ok(list) = deployments.list(&ListParams::default()).await {
            for d in list {
                let _ = converge(&client, &d).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn converge(client: &Client, d: &Deployment) -> Result<()> {
    let ns = d.namespace().unwrap_or_default();
    let name = d.name_any();
    let wanted = d.spec.replicas.unwrap_or(1).max(0) as usize;
    let labels: BTreeMap<String, String> = d
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let selector = labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let existing = pods
        .list(&ListParams::default().labels(&selector))
        .await?
        .items;
    for i in existing.len()..wanted {
        let pod_name = format!("{name}-{i}");
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": pod_name, "labels": labels},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}
        }))?;
        pods.create(&PostParams::default(), &pod).await?;
        let node = NODES[i % NODES.len()];
        pods.patch(
            &pod_name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"nodeName": node}})),
        )
        .await?;
        pods.patch_status(
            &pod_name,
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await?;
    }
    for extra in existing.iter().skip(wanted) {
        pods.delete(&extra.name_any(), &DeleteParams::default())
            .await?;
    }
    let available = d
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    if available != wanted as i32 {
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
        let status = json!({"status": {"replicas": wanted, "readyReplicas": wanted, "availableReplicas": wanted}});
        deployments
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(status))
            .await?;
    }
    Ok(())
}
