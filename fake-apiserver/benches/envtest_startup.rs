//! How long a test binary waits for its control plane: etcd and kube-apiserver started from
//! `KUBEBUILDER_ASSETS` (with and without kube-controller-manager, when the directory has
//! it), until the first request can be made, against the in-memory fake's start.
//!
//!   KUBEBUILDER_ASSETS=$HOME/.cache/real-apiserver/bin cargo bench -p fake-apiserver --bench envtest_startup
//!
//! `ENVTEST_BENCH_ROUNDS` (default 3) starts of each; prints each start and the medians.
//! Without `KUBEBUILDER_ASSETS` it says so and measures nothing.

use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use fake_apiserver::envtest::{ControlPlane, ControlPlaneOptions};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let Some(assets) = ControlPlane::assets_from_env() else {
        println!("envtest_startup: KUBEBUILDER_ASSETS is not set; nothing measured");
        return;
    };
    let rounds: usize = std::env::var("ENVTEST_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = median(
        (0..rounds)
            .map(|_| {
                let began = Instant::now();
                runtime.block_on(async {
                    let server = FakeApiServer::new();
                    let client = kube::Client::new(server, "default");
                    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> =
                        kube::Api::all(client);
                    namespaces.list(&Default::default()).await.unwrap();
                });
                began.elapsed()
            })
            .collect(),
    );
    println!("fake (in process, first list): {:.4}s", fake.as_secs_f64());
    let has_kcm = assets.join("kube-controller-manager").is_file();
    let mut modes = vec![("etcd+kube-apiserver", false)];
    if has_kcm {
        modes.push(("etcd+kube-apiserver+kube-controller-manager", true));
    }
    for (name, kcm) in modes {
        let mut times = Vec::new();
        for round in 1..=rounds {
            let plane = runtime
                .block_on(ControlPlane::start(
                    ControlPlaneOptions::new(&assets).controller_manager(kcm),
                ))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let took = plane.started_in();
            let stopping = Instant::now();
            plane.stop().unwrap();
            println!(
                "{name} round {round}: started in {:.2}s, stopped in {:.2}s",
                took.as_secs_f64(),
                stopping.elapsed().as_secs_f64()
            );
            times.push(took);
        }
        let m = median(times);
        println!(
            "{name}: median start {:.2}s ({:.0}x the fake's)",
            m.as_secs_f64(),
            m.as_secs_f64() / fake.as_secs_f64()
        );
    }
}
