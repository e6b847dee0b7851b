//! One test, any server: [`TestEnv`] runs a test against an in-process [`FakeApiServer`] by
//! default, against a control plane of real binaries when `KUBEBUILDER_ASSETS` names a
//! directory of them ([`crate::envtest`], started once per test binary), and against a real
//! cluster when `KUBE_TEST_KUBECONFIG` names a kubeconfig (it wins when both are set), with
//! no change to the test; [`TestEnv::builder`] picks one in code instead.
//!
//! Each environment has its own namespace (`kt-<random>`, the prefix set by
//! `KUBE_TEST_NAMESPACE_PREFIX` or [`TestEnvBuilder::namespace_prefix`]), so a
//! test that works in [`TestEnv::namespace`] runs again and again on a shared cluster;
//! [`TestEnv::cleanup`] deletes it (CRDs are cluster-scoped and stay, as they would after
//! `kubectl apply`). The fake's test controls ([`TestEnv::fake`]) exist only in process:
//! a test that needs them skips or branches on [`TestEnv::on_cluster`].

use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{Scope, pinned_kind};
use serde_json::{Value, json};

use crate::server::FakeApiServer;

/// The variable naming the kubeconfig of the cluster tests run against instead of the fake.
pub const KUBECONFIG_VAR: &str = "KUBE_TEST_KUBECONFIG";
/// The variable giving the namespace prefix (default `kt-`).
pub const NAMESPACE_PREFIX_VAR: &str = "KUBE_TEST_NAMESPACE_PREFIX";

/// Which server a [`TestEnv`] talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The in-process fake.
    Fake,
    /// etcd and kube-apiserver started from the binaries in this directory.
    Binaries(std::path::PathBuf),
    /// The cluster of this kubeconfig.
    Cluster(std::path::PathBuf),
}

impl Backend {
    /// What the environment variables choose: `KUBE_TEST_KUBECONFIG`, else
    /// `KUBEBUILDER_ASSETS`, else the fake.
    pub fn from_env() -> Backend {
        if let Some(path) = std::env::var_os(KUBECONFIG_VAR).filter(|v| !v.is_empty()) {
            return Backend::Cluster(path.into());
        }
        match std::env::var_os("KUBEBUILDER_ASSETS").filter(|v| !v.is_empty()) {
            Some(dir) => Backend::Binaries(dir.into()),
            None => Backend::Fake,
        }
    }
}

/// How to start a [`TestEnv`]: the backend (default [`Backend::from_env`]) and the
/// namespace prefix.
#[derive(Debug, Default)]
pub struct TestEnvBuilder {
    backend: Option<Backend>,
    fake: Option<FakeApiServer>,
    prefix: Option<String>,
}

impl TestEnvBuilder {
    /// Runs on `backend` whatever the environment says.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// Runs on the real binaries in `assets` (as `KUBEBUILDER_ASSETS` would).
    pub fn binaries(self, assets: impl Into<std::path::PathBuf>) -> Self {
        self.backend(Backend::Binaries(assets.into()))
    }

    /// Runs in process on `server` (seeded or configured by the caller).
    pub fn fake(mut self, server: FakeApiServer) -> Self {
        self.backend = Some(Backend::Fake);
        self.fake = Some(server);
        self
    }

    /// Names namespaces `<prefix><random>` (default `kt-`, or `KUBE_TEST_NAMESPACE_PREFIX`):
    /// on a shared cluster, a prefix of one's own keeps one's namespaces apart. A prefix
    /// must be a DNS label's start (lower-case letters, digits, `-`), at most 40 characters.
    pub fn namespace_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Starts the environment and creates its namespace.
    pub async fn start(self) -> Result<TestEnv, TestEnvError> {
        let prefix = match self.prefix {
            Some(p) => p,
            None => std::env::var(NAMESPACE_PREFIX_VAR)
                .ok()
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "kt-".to_owned()),
        };
        let valid = !prefix.is_empty()
            && prefix.len() <= 40
            && prefix.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && prefix
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !valid {
            return Err(TestEnvError(format!(
                "namespace prefix {prefix:?}: it must start a DNS label (a-z, 0-9, '-', starting \
                 with a letter or digit) and be at most 40 characters"
            )));
        }
        let namespace = fresh_namespace(&prefix);
        match self.backend.unwrap_or_else(Backend::from_env) {
            Backend::Fake => {
                let server = self.fake.unwrap_or_default();
                let client = kube::Client::new(server.clone(), namespace.clone());
                TestEnv::with(client, namespace, Some(server), None).await
            }
            Backend::Cluster(path) => {
                let config = config_of(&path, &namespace).await?;
                let client =
                    kube::Client::try_from(config).map_err(|e| err("building a client", e))?;
                TestEnv::with(client, namespace, None, Some(path)).await
            }
            Backend::Binaries(assets) => TestEnv::on_binaries(assets, namespace).await,
        }
    }
}

/// Why a test environment could not start or act.
#[derive(Debug)]
pub struct TestEnvError(String);

impl std::fmt::Display for TestEnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TestEnvError {}

fn err(what: &str, e: impl std::fmt::Display) -> TestEnvError {
    TestEnvError(format!("{what}: {e}"))
}

/// A client, a namespace of its own, and (in process) the fake behind them.
pub struct TestEnv {
    client: kube::Client,
    namespace: String,
    fake: Option<FakeApiServer>,
    kubeconfig: Option<std::path::PathBuf>,
}

impl TestEnv {
    /// The backend the environment variables choose ([`Backend::from_env`]), with a fresh
    /// namespace.
    pub async fn start() -> Result<TestEnv, TestEnvError> {
        TestEnv::builder().start().await
    }

    /// A builder, to choose the backend or the namespace prefix in code.
    pub fn builder() -> TestEnvBuilder {
        TestEnvBuilder::default()
    }

    /// Always in process, on `server` (seeded or configured by the caller).
    pub async fn in_process(server: FakeApiServer) -> Result<TestEnv, TestEnvError> {
        TestEnv::builder().fake(server).start().await
    }

    #[cfg(unix)]
    async fn on_binaries(
        assets: std::path::PathBuf,
        namespace: String,
    ) -> Result<TestEnv, TestEnvError> {
        use crate::envtest::{ControlPlane, ControlPlaneOptions};
        let same = |a: &std::path::Path, b: &std::path::Path| {
            a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        };
        // The binary's shared control plane when these are `KUBEBUILDER_ASSETS`'s binaries;
        // else one per directory, started once (the lock is held across the start, so tests
        // asking at once wait for it) and kept for the rest of the process as the shared one
        // is. A failed start is remembered too.
        let plane = if ControlPlane::assets_from_env().is_some_and(|env| same(&env, &assets)) {
            ControlPlane::shared().await
        } else {
            type Started = Result<&'static ControlPlane, String>;
            static OTHERS: tokio::sync::Mutex<Vec<(std::path::PathBuf, Started)>> =
                tokio::sync::Mutex::const_new(Vec::new());
            let mut others = OTHERS.lock().await;
            let known = others
                .iter()
                .find(|(dir, _)| same(dir, &assets))
                .map(|(_, started)| started.clone());
            match known {
                Some(started) => started,
                None => {
                    let started: Started = ControlPlane::start(ControlPlaneOptions::new(&assets))
                        .await
                        .map(|p| &*Box::leak(Box::new(p)))
                        .map_err(|e| e.to_string());
                    others.push((assets.clone(), started.clone()));
                    started
                }
            }
            .map_err(crate::envtest::EnvtestError::from_message)
        }
        .map_err(|e| err("starting the control plane", e))?;
        let config = config_of(plane.kubeconfig(), &namespace).await?;
        let client = kube::Client::try_from(config).map_err(|e| err("building a client", e))?;
        TestEnv::with(
            client,
            namespace,
            None,
            Some(plane.kubeconfig().to_path_buf()),
        )
        .await
    }

    #[cfg(not(unix))]
    async fn on_binaries(
        _assets: std::path::PathBuf,
        _namespace: String,
    ) -> Result<TestEnv, TestEnvError> {
        Err(TestEnvError(
            "real binaries (KUBEBUILDER_ASSETS) need a Unix; use a cluster or the fake".into(),
        ))
    }

    async fn with(
        client: kube::Client,
        namespace: String,
        fake: Option<FakeApiServer>,
        kubeconfig: Option<std::path::PathBuf>,
    ) -> Result<TestEnv, TestEnvError> {
        let ns: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}
        }))
        .map_err(|e| err("namespace", e))?;
        namespaces(&client)
            .create(&PostParams::default(), &ns)
            .await
            .map_err(|e| err(&format!("creating namespace {namespace}"), e))?;
        if fake.is_none() {
            wait_default_service_account(&client, &namespace).await?;
        }
        Ok(TestEnv {
            client,
            namespace,
            fake,
            kubeconfig,
        })
    }

    /// The client; its default namespace is [`TestEnv::namespace`].
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// This environment's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Whether the test runs against a real kube-apiserver: a cluster
    /// (`KUBE_TEST_KUBECONFIG`) or real binaries (`KUBEBUILDER_ASSETS`).
    pub fn on_cluster(&self) -> bool {
        self.fake.is_none()
    }

    /// The kubeconfig of the real server (a cluster's, or the control plane's own for real
    /// binaries), for a binary under test; `None` on the fake.
    pub fn kubeconfig(&self) -> Option<&std::path::Path> {
        self.kubeconfig.as_deref()
    }

    /// A client acting as the ServiceAccount `namespace/name`, with the RBAC it is bound to
    /// (its default namespace is this environment's): on the fake, the fake's own service
    /// account handle (its requests recorded for [`FakeApiServer::access_report`]); on a
    /// real server, the environment's credentials impersonating the account and its groups,
    /// so that a missing grant is the 403 the account would get.
    pub async fn client_as_service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<kube::Client, TestEnvError> {
        if let Some(fake) = &self.fake {
            return Ok(kube::Client::new(
                fake.as_service_account(namespace, name),
                self.namespace.clone(),
            ));
        }
        let path = self
            .kubeconfig
            .as_ref()
            .ok_or_else(|| TestEnvError("no kubeconfig to impersonate with".into()))?;
        let mut config = config_of(path, &self.namespace).await?;
        config.auth_info.impersonate = Some(format!("system:serviceaccount:{namespace}:{name}"));
        config.auth_info.impersonate_groups = Some(vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".to_owned(),
        ]);
        kube::Client::try_from(config).map_err(|e| err("building a client", e))
    }

    /// The fake, for its test controls (actions, faults, watches); `None` on a cluster.
    pub fn fake(&self) -> Option<&FakeApiServer> {
        self.fake.as_ref()
    }

    /// Applies `object` through the API with server-side apply (field manager
    /// `kube-test-env`, forced), so that a CRD another run installed is simply kept; a
    /// namespaced object without a namespace goes to this environment's. A CRD is waited
    /// for until it is established; one of the same name still being deleted (an earlier
    /// run's, whose objects the server is removing) is first waited for until it is gone, up
    /// to a minute, since applying over it would leave it terminating and its kind refusing
    /// creates. Returns the stored object.
    pub async fn apply(&self, object: impl serde::Serialize) -> Result<Value, TestEnvError> {
        let mut obj = serde_json::to_value(object).map_err(|e| err("serializing", e))?;
        let api_version = obj["apiVersion"].as_str().unwrap_or("").to_owned();
        let kind = obj["kind"].as_str().unwrap_or("").to_owned();
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        let gvk = GroupVersionKind::gvk(group, version, &kind);
        let (resource, caps) = pinned_kind(&self.client, &gvk)
            .await
            .map_err(|e| err(&format!("finding {api_version} {kind}"), e))?;
        let api: Api<DynamicObject> = match caps.scope {
            Scope::Namespaced => {
                let ns = obj
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(&self.namespace)
                    .to_owned();
                obj["metadata"]["namespace"] = json!(ns);
                Api::namespaced_with(self.client.clone(), &ns, &resource)
            }
            Scope::Cluster => Api::all_with(self.client.clone(), &resource),
        };
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let is_crd = kind == "CustomResourceDefinition" && api_version == "apiextensions.k8s.io/v1";
        if is_crd {
            wait_gone_if_terminating(&api, &name).await?;
        }
        let created = api
            .patch(
                &name,
                &PatchParams::apply("kube-test-env").force(),
                &Patch::Apply(&obj),
            )
            .await
            .map_err(|e| err(&format!("applying {kind} {name}"), e))?;
        if is_crd {
            self.wait_established(&api, &created.metadata.name.clone().unwrap_or_default())
                .await?;
        }
        serde_json::to_value(created).map_err(|e| err("created object", e))
    }

    /// Applies every object of the manifests at `path` (a YAML or JSON file, several
    /// documents and `List`s allowed, or a directory of `.yaml`, `.yml` and `.json` files,
    /// read in name order) as [`TestEnv::apply`] does, CustomResourceDefinitions first: how a
    /// test installs a CRD it consumes (one `kube-codegen import` read, whose `crds()` leaves
    /// it out) from its owner's manifest. Returns the stored objects; nothing is applied when
    /// a file cannot be read or parsed.
    pub async fn apply_manifests(
        &self,
        path: impl AsRef<std::path::Path>,
    ) -> Result<Vec<Value>, TestEnvError> {
        let mut objects = read_manifests(path.as_ref())?;
        // A stable partition: CRDs before the objects of their kinds.
        objects.sort_by_key(|o| o["kind"] != "CustomResourceDefinition");
        let mut out = Vec::with_capacity(objects.len());
        for object in objects {
            out.push(self.apply(object).await?);
        }
        Ok(out)
    }

    async fn wait_established(
        &self,
        api: &Api<DynamicObject>,
        name: &str,
    ) -> Result<(), TestEnvError> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let crd = api.get(name).await.map_err(|e| err("reading the CRD", e))?;
            let established = crd.data["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if established {
                // On a cluster, discovery and the new resource's endpoints follow the
                // condition closely; the fake serves them as it sets it.
                if self.on_cluster() {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(TestEnvError(format!(
                    "CRD {name} not established within 30s"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Deletes the namespace and everything in it.
    pub async fn cleanup(self) -> Result<(), TestEnvError> {
        match namespaces(&self.client)
            .delete(&self.namespace, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 404 => Ok(()),
            Err(e) => Err(err(&format!("deleting namespace {}", self.namespace), e)),
        }
    }
}

/// The client configuration of the kubeconfig at `path`, `namespace` its default.
async fn config_of(path: &std::path::Path, namespace: &str) -> Result<kube::Config, TestEnvError> {
    let file = kube::config::Kubeconfig::read_from(path)
        .map_err(|e| err(&format!("reading {}", path.display()), e))?;
    let mut config = kube::Config::from_custom_kubeconfig(file, &Default::default())
        .await
        .map_err(|e| err(&format!("loading {}", path.display()), e))?;
    config.default_namespace = namespace.to_owned();
    Ok(config)
}

/// Every object of the manifests at `path`: a file, or the manifest files of a directory in
/// name order (not its subdirectories).
fn read_manifests(path: &std::path::Path) -> Result<Vec<Value>, TestEnvError> {
    let shown = path.display();
    let files = if path.is_dir() {
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(path)
            .map_err(|e| err(&format!("reading {shown}"), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension()
                        .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
            })
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| err(&format!("reading {}", file.display()), e))?;
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
            .map_err(|e| err(&format!("parsing {}", file.display()), e))?;
        for doc in docs {
            match doc {
                Value::Null => {}
                Value::Object(ref o) if o.get("kind") == Some(&json!("List")) => {
                    out.extend(
                        o.get("items")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default(),
                    );
                }
                Value::Object(_) => out.push(doc),
                _ => {
                    return Err(TestEnvError(format!(
                        "{}: a document is not an object",
                        file.display()
                    )));
                }
            }
        }
    }
    Ok(out)
}

/// On a server whose controllers make every namespace a `default` ServiceAccount (one with
/// kube-controller-manager: `kube-system` has one), waits up to 10 s for `namespace`'s, so
/// that the test's first Pod is not refused by the ServiceAccount admission plugin.
async fn wait_default_service_account(
    client: &kube::Client,
    namespace: &str,
) -> Result<(), TestEnvError> {
    let accounts = |ns: &str| {
        let resource =
            kube::core::ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "ServiceAccount"));
        Api::<DynamicObject>::namespaced_with(client.clone(), ns, &resource)
    };
    // Not made there, or not ours to read: nothing to wait for.
    if !matches!(
        accounts("kube-system").get_opt("default").await,
        Ok(Some(_))
    ) {
        return Ok(());
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let ours = accounts(namespace);
    while Instant::now() < deadline {
        if ours
            .get_opt("default")
            .await
            .map_err(|e| err("reading the namespace's ServiceAccounts", e))?
            .is_some()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(TestEnvError(format!(
        "namespace {namespace} has no ServiceAccount default after 10s"
    )))
}

/// Waits until the object `name` of `api`, if it is being deleted, is gone.
async fn wait_gone_if_terminating(
    api: &Api<DynamicObject>,
    name: &str,
) -> Result<(), TestEnvError> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let current = api
            .get_opt(name)
            .await
            .map_err(|e| err(&format!("reading {name}"), e))?;
        let Some(current) = current.filter(|o| o.metadata.deletion_timestamp.is_some()) else {
            return Ok(());
        };
        if Instant::now() > deadline {
            return Err(TestEnvError(format!(
                "{name} is being deleted and was not gone within 60s (finalizers: {:?})",
                current.metadata.finalizers.unwrap_or_default()
            )));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn namespaces(client: &kube::Client) -> Api<DynamicObject> {
    let resource = kube::core::ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"));
    Api::all_with(client.clone(), &resource)
}

/// `prefix` and five random characters.
fn fresh_namespace(prefix: &str) -> String {
    format!("{prefix}{}", crate::meta::random_suffix(unique()))
}

/// A different seed for each environment of a process.
fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos
        ^ (u64::from(std::process::id()) << 20)
        ^ COUNT
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9)
}
