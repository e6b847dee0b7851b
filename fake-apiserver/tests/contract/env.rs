//! Where a case runs, and what it leaves behind: nothing.
//!
//! Every case gets its own namespace, named after the case and this run
//! (`ct-<case>-<run>`), and every object it creates carries the label
//! `kube-codegen.dev/contract=<run>`, so assertions can ignore what a cluster's
//! controllers add (a `kube-root-ca.crt` ConfigMap, a `default` ServiceAccount, ...).
//! [`case`] deletes the namespace and whatever cluster-scoped objects the case registered,
//! also when the case panics, so the suite runs again and again on the same cluster. It
//! first takes the finalizers off the namespace's objects of the kinds cases create: a
//! finalizer nobody removes would keep the namespace `Terminating` on a cluster for ever.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use fake_apiserver::FakeApiServer;
use futures::FutureExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject};
use kube::{Client, ResourceExt};

/// The label every object of this run carries.
pub const RUN_LABEL: &str = "kube-codegen.dev/contract";

/// Six lowercase characters naming this run of the suite.
pub fn run_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut x = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        (0..6)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
                alphabet[((x >> 33) % alphabet.len() as u64) as usize] as char
            })
            .collect()
    })
}

/// A cluster-scoped object to delete when the case ends.
struct Leftover {
    resource: ApiResource,
    name: String,
}

/// One case's client, namespace and clean-up list.
#[derive(Clone)]
pub struct Env {
    /// The client: the in-process fake, or the cluster of `KUBE_CONTRACT_KUBECONFIG`.
    pub client: Client,
    /// This case's namespace.
    pub ns: String,
    leftovers: Arc<Mutex<Vec<Leftover>>>,
    /// The fake the client talks to, when it is one.
    fake: Option<FakeApiServer>,
}

/// Whether the suite runs against a real kube-apiserver: a cluster
/// (`KUBE_CONTRACT_KUBECONFIG`) or one started from `KUBEBUILDER_ASSETS`'s binaries.
pub fn on_cluster() -> bool {
    std::env::var_os("KUBE_CONTRACT_KUBECONFIG").is_some()
        || fake_apiserver::envtest::ControlPlane::assets_from_env().is_some()
}

/// The real server's kubeconfig: `KUBE_CONTRACT_KUBECONFIG`, else that of the control plane
/// this test binary starts from `KUBEBUILDER_ASSETS` (once, for every case); `None` on the
/// fake.
pub async fn kubeconfig() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("KUBE_CONTRACT_KUBECONFIG") {
        return Some(PathBuf::from(path));
    }
    fake_apiserver::envtest::ControlPlane::assets_from_env()?;
    let plane = fake_apiserver::envtest::ControlPlane::shared()
        .await
        .unwrap_or_else(|e| panic!("starting the control plane of KUBEBUILDER_ASSETS: {e}"));
    Some(plane.kubeconfig().to_path_buf())
}

async fn client() -> (Client, Option<FakeApiServer>) {
    match kubeconfig().await {
        Some(path) => {
            let path = path.display().to_string();
            let kubeconfig = kube::config::Kubeconfig::read_from(&path)
                .unwrap_or_else(|e| panic!("KUBE_CONTRACT_KUBECONFIG={path}: {e}"));
            let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .expect("a usable kubeconfig");
            // Cases assert the server's first answer; kube retries 429, 503 and 504.
            config.default_retry = false;
            (Client::try_from(config).expect("a client"), None)
        }
        None => {
            let fake = FakeApiServer::new();
            (Client::new(fake.clone(), "default"), Some(fake))
        }
    }
}

/// Runs one case in a fresh namespace and cleans up afterwards, whether it passed or not.
pub async fn case<F, Fut>(name: &str, body: F)
where
    F: FnOnce(Env) -> Fut,
    Fut: Future<Output = ()>,
{
    let (client, fake) = client().await;
    let ns = format!("ct-{name}-{}", run_id());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut object = Namespace::default();
    object.metadata.name = Some(ns.clone());
    object.metadata.labels = Some([(RUN_LABEL.to_owned(), run_id().to_owned())].into());
    namespaces
        .create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("creating the case's namespace {ns}: {e}"));
    let env = Env {
        client: client.clone(),
        ns: ns.clone(),
        leftovers: Arc::default(),
        fake,
    };
    let leftovers = env.leftovers.clone();
    let outcome = AssertUnwindSafe(body(env)).catch_unwind().await;
    let taken: Vec<Leftover> = std::mem::take(&mut *leftovers.lock().unwrap());
    for leftover in taken {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &leftover.resource);
        let _ = api.delete(&leftover.name, &DeleteParams::default()).await;
    }
    release_finalizers(&client, &ns).await;
    if let Err(e) = namespaces.delete(&ns, &DeleteParams::default()).await
        && outcome.is_ok()
    {
        panic!("deleting the case's namespace {ns}: {e}");
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Takes the finalizers off every object in `ns` of the built-in kinds the cases create
/// (best effort: cleanup must not fail a case that passed).
async fn release_finalizers(client: &Client, ns: &str) {
    let kinds = [
        ApiResource::erase::<ConfigMap>(&()),
        ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
        ApiResource::erase::<k8s_openapi::api::core::v1::ServiceAccount>(&()),
        ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
    ];
    for resource in kinds {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource);
        let Ok(list) = api.list(&ListParams::default()).await else {
            continue;
        };
        for object in list.items.iter().filter(|o| !o.finalizers().is_empty()) {
            let release = Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}}));
            let _ = api
                .patch(&object.name_any(), &PatchParams::default(), &release)
                .await;
        }
    }
}

impl Env {
    /// An API for a namespaced kind, in this case's namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// A selector for the objects this run created.
    pub fn ours(&self) -> ListParams {
        ListParams::default().labels(&format!("{RUN_LABEL}={}", run_id()))
    }

    /// A selector for the objects this run created that also match `selector`.
    pub fn select(&self, selector: &str) -> ListParams {
        ListParams::default().labels(&format!("{RUN_LABEL}={},{selector}", run_id()))
    }

    /// Deletes `name` of a cluster-scoped `resource` when the case ends.
    pub fn delete_later(&self, resource: ApiResource, name: &str) {
        self.leftovers.lock().unwrap().push(Leftover {
            resource,
            name: name.to_owned(),
        });
    }

    /// The same namespace on a fresh in-process fake, to send the same requests to both.
    pub async fn fake_twin(&self) -> Env {
        let client = Client::new(FakeApiServer::new(), "default");
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let mut object = Namespace::default();
        object.metadata.name = Some(self.ns.clone());
        namespaces
            .create(&PostParams::default(), &object)
            .await
            .expect("the fake creates the namespace");
        Env {
            client,
            ns: self.ns.clone(),
            leftovers: Arc::default(),
            fake: None,
        }
    }

    /// A client that authenticates with the bearer `token` (from a TokenRequest) instead
    /// of the suite's credentials: on a cluster, its server and CA with the token alone; on
    /// the fake, the same server with an `Authorization` header on every request.
    pub async fn client_with_token(&self, token: &str) -> Client {
        let header = http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        match kubeconfig().await {
            Some(path) => {
                let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
                let mut config =
                    kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                        .await
                        .unwrap();
                config.auth_info = kube::config::AuthInfo {
                    token: Some(token.to_owned().into()),
                    ..Default::default()
                };
                config.default_retry = false;
                Client::try_from(config).expect("a client")
            }
            None => Client::new(
                tower::ServiceBuilder::new()
                    .map_request(move |mut req: http::Request<kube::client::Body>| {
                        req.headers_mut()
                            .insert(http::header::AUTHORIZATION, header.clone());
                        req
                    })
                    .service(self.fake.clone().expect("the fake")),
                self.ns.clone(),
            ),
        }
    }

    /// A name unique to this run, for cluster-scoped objects: `<base>-<run>`.
    pub fn unique(&self, base: &str) -> String {
        format!("{base}-{}", run_id())
    }
}

/// A raw response: status code, `Warning` headers, and the body as JSON.
pub struct Raw {
    /// HTTP status.
    pub code: u16,
    /// The text of each `Warning` header (`unknown field "x"`).
    pub warnings: Vec<String>,
    /// The body.
    pub body: serde_json::Value,
}

impl Raw {
    /// `(code, reason)` of a Status body.
    pub fn status(&self) -> (u16, &str) {
        (
            self.code,
            self.body
                .get("reason")
                .and_then(|r| r.as_str())
                .unwrap_or(""),
        )
    }

    /// The Status message.
    pub fn message(&self) -> &str {
        self.body
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or("")
    }

    /// `(reason, field)` of each cause, sorted.
    pub fn causes(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .body
            .pointer("/details/causes")
            .and_then(|c| c.as_array())
            .map(|list| {
                list.iter()
                    .map(|c| {
                        let s =
                            |k: &str| c.get(k).and_then(|v| v.as_str()).unwrap_or("").to_owned();
                        (s("reason"), s("field"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out.dedup();
        out
    }
}

impl Env {
    /// Sends a request as it is (method, path with query, content type, body), for what
    /// `Api<K>` cannot send: wrong methods, media types, malformed parameters.
    pub async fn raw(&self, method: &str, path: &str, content_type: &str, body: &str) -> Raw {
        self.raw_bytes(method, path, content_type, body.as_bytes())
            .await
    }

    /// [`Env::raw`] with a body of any bytes (protobuf).
    pub async fn raw_bytes(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: &[u8],
    ) -> Raw {
        use http_body_util::BodyExt;
        let mut req = http::Request::builder().method(method).uri(path);
        if !content_type.is_empty() {
            req = req.header("content-type", content_type);
        }
        let req = req
            .body(kube::client::Body::from(body.to_vec()))
            .expect("a valid request");
        let response = self.client.send(req).await.expect("a response");
        let code = response.status().as_u16();
        let warnings = response
            .headers()
            .get_all("warning")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(|v| {
                let text = v.trim_start_matches("299 - ");
                let text = text.strip_prefix('"').unwrap_or(text);
                let text = text.strip_suffix('"').unwrap_or(text);
                text.replace("\\\"", "\"").replace("\\\\", "\\")
            })
            .collect();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&bytes).into()));
        Raw {
            code,
            warnings,
            body,
        }
    }

    /// The path of this case's namespaced collection, e.g. `/api/v1/namespaces/<ns>/configmaps`.
    pub fn path(&self, group_version: &str, plural: &str) -> String {
        let root = if group_version.contains('/') {
            "apis"
        } else {
            "api"
        };
        format!("/{root}/{group_version}/namespaces/{}/{plural}", self.ns)
    }
}

/// A ConfigMap of this run: labelled with [`RUN_LABEL`] and `labels`, holding `k: v`.
pub fn configmap(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    let mut all: std::collections::BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    all.insert(RUN_LABEL.into(), run_id().into());
    cm.metadata.labels = Some(all);
    cm.data = Some([("k".into(), "v".into())].into());
    cm
}

/// Sorted names of a list.
pub fn names<K: kube::Resource + Clone>(list: &kube::core::ObjectList<K>) -> Vec<String> {
    let mut out: Vec<String> = list.items.iter().map(ResourceExt::name_any).collect();
    out.sort();
    out
}

/// The status of an API error; panics on anything else.
pub fn status(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

/// `(code, reason)` of an API error.
pub fn api_error(err: kube::Error) -> (u16, String) {
    let s = status(err);
    (s.code, s.reason)
}

/// `(reason, field)` of every cause of an API error, sorted (the real server reports causes
/// of map keys in random order).
pub fn causes(status: &kube::core::Status) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = status
        .details
        .as_ref()
        .map(|d| {
            d.causes
                .iter()
                .map(|c| (c.reason.clone(), c.field.clone()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Polls `check` until it returns `Some`, for up to 60 s: on a cluster, controllers (garbage
/// collection, the namespace controller) act asynchronously; the fake acts at once.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: not within 60s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
