//! The whole process: the `sample-controller` binary against an API server over HTTP, with
//! leader election, health endpoints, metrics and graceful shutdown on SIGTERM.
//!
//! By default the API server is the fake one, on loopback. With `E2E_KUBECONFIG=<path>` the
//! same test runs against that cluster, and with `KUBEBUILDER_ASSETS=<dir>` against etcd and
//! kube-apiserver started from that directory's binaries (the CRDs are installed first);
//! checks that need the fake's view are skipped there.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use sample_controller::apis::samplecontroller::v1alpha1::{Foo, FooSpec};
use sample_controller::apis::samplecontroller::v1beta1;

fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let code = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    Some((code, body))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn until<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut f: impl FnMut() -> F,
) -> T {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not within 30s");
}

struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_reconciles_holds_the_lease_and_shuts_down_gracefully() {
    let dir = std::env::temp_dir().join(format!("sample-controller-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let real = match std::env::var("E2E_KUBECONFIG") {
        Ok(path) => Some(std::path::PathBuf::from(path)),
        Err(_) if fake_apiserver::envtest::ControlPlane::assets_from_env().is_some() => {
            let plane = fake_apiserver::envtest::ControlPlane::shared()
                .await
                .unwrap();
            Some(plane.kubeconfig().to_path_buf())
        }
        Err(_) => None,
    };
    let (kubeconfig, fake, _served) = match real {
        Some(path) => (path, None, None),
        None => {
            let fake = FakeApiServer::new();
            let served = fake.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
            let path = dir.join("kubeconfig");
            std::fs::write(&path, served.kubeconfig()).unwrap();
            (path, Some(fake), Some(served))
        }
    };
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client = Client::try_from(config).unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    // Installed (or updated, on a cluster that has them) by server-side apply: a rejected
    // CRD fails the test here, not later as a 404.
    for crd in sample_controller::generated::crds().unwrap() {
        let name = crd.metadata.name.clone().unwrap();
        crds.patch(
            &name,
            &PatchParams::apply("sample-controller-e2e").force(),
            &Patch::Apply(&crd),
        )
        .await
        .unwrap_or_else(|e| panic!("the API server refused CRD {name}: {e}"));
        until(&format!("CRD {name} established"), || async {
            let conditions = crds.get(&name).await.ok()?.status?.conditions?;
            conditions
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
                .then_some(())
        })
        .await;
    }

    let port = free_port();
    let webhook_port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_sample-controller"))
        .args([
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--leader-elect",
            "--identity",
            "e2e-replica",
        ])
        .args([
            "--health-addr",
            &format!("127.0.0.1:{port}"),
            "--namespace",
            "default",
            "--shutdown-deadline",
            "5",
        ])
        // Development mode: the admission and conversion webhooks on loopback, installed on
        // the server (which reaches 127.0.0.1, fake or kube-apiserver) until SIGTERM.
        .args(["--webhook-addr", &format!("127.0.0.1:{webhook_port}")])
        .arg("--webhook-cert-dir")
        .arg(dir.join("certs"))
        .arg("--install-webhooks")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Guard(child);
    let pid = child.0.id();

    until("/readyz", || async {
        (http_get(port, "/readyz")?.0 == 200).then_some(())
    })
    .await;
    assert_eq!(http_get(port, "/healthz").unwrap().0, 200);

    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    let foo = Foo::new(
        "e2e-foo",
        FooSpec {
            deployment_name: "e2e-foo".into(),
            replicas: Some(2),
        },
    );
    let _ = foos.delete("e2e-foo", &DeleteParams::default()).await;
    foos.create(&PostParams::default(), &foo).await.unwrap();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d = until("the controller creates the Deployment", || async {
        deployments.get_opt("e2e-foo").await.ok().flatten()
    })
    .await;
    assert_eq!(d.spec.replicas, Some(2));

    // Foo in v1beta1 through the generated client, converted by the binary's webhook: the
    // v1alpha1 Foo reads nested, and one written as v1beta1 reads flat as v1alpha1.
    let clients = sample_controller::generated::Clientset::new(
        client.clone(),
        kube_codegen_runtime::FieldManager::new("sample-controller-e2e"),
    );
    let beta = clients.samplecontroller_v1beta1().foos("default");
    let read = until(
        "e2e-foo served as v1beta1 by the conversion webhook",
        || async { beta.get("e2e-foo").await.ok() },
    )
    .await;
    assert_eq!(
        (
            read.spec.deployment.name.as_str(),
            read.spec.deployment.replicas
        ),
        ("e2e-foo", Some(2))
    );
    let _ = foos.delete("e2e-beta", &DeleteParams::default()).await;
    let nested = v1beta1::Foo::new(
        "e2e-beta",
        v1beta1::FooSpec {
            deployment: v1beta1::FooDeployment {
                name: "e2e-beta".into(),
                replicas: Some(1),
            },
            note: Some("v1alpha1 has no place for this".into()),
        },
    );
    let created = beta.create(&nested, &PostParams::default()).await.unwrap();
    let flat = foos.get("e2e-beta").await.unwrap();
    assert_eq!(
        (flat.spec.deployment_name.as_str(), flat.spec.replicas),
        ("e2e-beta", Some(1))
    );
    // v1beta1's note, which v1alpha1 has no field for, is kept on the stored v1alpha1
    // object in an annotation, and the Foo reads back as v1beta1 unchanged.
    assert_eq!(
        flat.metadata.annotations.as_ref().unwrap()["samplecontroller.k8s.io/conversion-v1beta1"],
        r#"{"note":"v1alpha1 has no place for this"}"#
    );
    let again = beta.get("e2e-beta").await.unwrap();
    assert_eq!(again.spec, nested.spec);
    assert_eq!(again.spec, created.spec);
    assert_eq!(again.metadata.annotations, created.metadata.annotations);
    let listed: Vec<String> = beta
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|f| f.spec.deployment.name)
        .collect();
    for name in ["e2e-foo", "e2e-beta"] {
        assert!(listed.iter().any(|n| n == name), "{name} in {listed:?}");
    }

    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let lease = leases.get("sample-controller").await.unwrap();
    assert_eq!(
        lease.spec.unwrap().holder_identity.as_deref(),
        Some("e2e-replica")
    );
    let metrics = http_get(port, "/metrics").unwrap().1;
    // controller-runtime's and client-go's names and labels, as dashboards read them.
    for series in [
        "controller_runtime_reconcile_total{controller=\"foo\",result=\"success\"}",
        "controller_runtime_reconcile_errors_total{controller=\"icecream\"}",
        "controller_runtime_reconcile_time_seconds_count{controller=\"foo\"}",
        "controller_runtime_max_concurrent_reconciles{controller=\"foo\"} 2",
        "workqueue_adds_total{name=\"foo\",controller=\"foo\"}",
        "workqueue_depth{name=\"icecream\",controller=\"icecream\"}",
        "leader_election_master_status{name=\"sample-controller\"} 1",
        "rest_client_requests_total{code=\"200\",method=\"GET\",host=",
        "process_resident_memory_bytes",
    ] {
        assert!(metrics.contains(series), "{series} in\n{metrics}");
    }

    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no exit within 15s of SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut logs = String::new();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(status.success(), "exit {status:?}\n{logs}");
    assert!(logs.contains("shutting down gracefully"), "{logs}");
    assert!(logs.contains("stopped"), "{logs}");
    let released = leases.get("sample-controller").await.unwrap();
    let holder = released
        .spec
        .and_then(|s| s.holder_identity)
        .unwrap_or_default();
    assert!(
        holder.is_empty(),
        "the lease is released on shutdown, held by {holder:?}"
    );

    let conversion = crds
        .get("foos.samplecontroller.k8s.io")
        .await
        .unwrap()
        .spec
        .conversion
        .map(|c| c.strategy);
    assert_eq!(
        conversion.as_deref(),
        Some("None"),
        "the conversion put back at shutdown"
    );
    let _ = foos.delete("e2e-beta", &DeleteParams::default()).await;
    if let Some(fake) = &fake {
        assert!(
            fake.get("apps/v1", "Deployment", Some("default"), "e2e-foo")
                .is_some()
        );
    } else {
        let _ = foos.delete("e2e-foo", &DeleteParams::default()).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
