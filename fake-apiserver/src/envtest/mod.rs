//! envtest: a real etcd and kube-apiserver (and kube-controller-manager, when its binary is
//! there) started from a directory of binaries, for tests that must hold on the real server
//! without a cluster. The counterpart of controller-runtime's `pkg/envtest`, with the same
//! inputs: `KUBEBUILDER_ASSETS` names the directory (`setup-envtest` fills one, and so does
//! `kube-codegen envtest fetch`).
//!
//! [`ControlPlane::start`] picks free loopback ports, writes a serving certificate, a
//! service-account key and an admin token into a fresh temporary directory, starts etcd and
//! kube-apiserver with envtest's flags, and waits until `/readyz` answers and namespace
//! `default` exists (and, with kube-controller-manager, until its controllers made the
//! `default` ServiceAccount). [`ControlPlane::shared`] starts one per test binary, on first
//! use, for every test of it.
//!
//! Nothing outlives the test process: every server runs in a process group of its own,
//! watched by a small `sh` process that holds the read end of a pipe whose write end only
//! this process holds. When this process ends (tests done, a panic, `SIGKILL`), the pipe
//! closes and the watchdog stops the groups (`SIGTERM`, `SIGKILL` after 1 s) and removes the
//! directory; [`ControlPlane::stop`] does the same at once and waits for it.

mod certs;
mod error;
mod options;
mod process;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use error::EnvtestError;
use error::fail;
pub use options::{ASSETS_VAR, ATTACH_OUTPUT_VAR, ControlPlaneOptions, START_TIMEOUT_VAR};
use process::{Server, Watchdog};

/// A running etcd and kube-apiserver (and kube-controller-manager).
pub struct ControlPlane {
    assets: PathBuf,
    dir: PathBuf,
    url: String,
    kubeconfig: PathBuf,
    started_in: Duration,
    controller_manager: bool,
    servers: std::sync::Mutex<Vec<Server>>,
    watchdog: std::sync::Mutex<Option<Watchdog>>,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("url", &self.url)
            .field("dir", &self.dir)
            .field("controller_manager", &self.controller_manager)
            .finish_non_exhaustive()
    }
}

static SHARED: tokio::sync::OnceCell<Result<ControlPlane, String>> =
    tokio::sync::OnceCell::const_new();

impl ControlPlane {
    /// The directory `KUBEBUILDER_ASSETS` names, when it is set and not empty.
    pub fn assets_from_env() -> Option<PathBuf> {
        std::env::var_os(ASSETS_VAR)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    /// The control plane of this test binary, from `KUBEBUILDER_ASSETS`, started by the
    /// first test that asks and stopped when the process ends. A start that failed fails
    /// every later call with the same message, rather than starting again per test.
    pub async fn shared() -> Result<&'static ControlPlane, EnvtestError> {
        let started = SHARED
            .get_or_init(|| async {
                let Some(assets) = ControlPlane::assets_from_env() else {
                    return Err(format!("{ASSETS_VAR} is not set"));
                };
                ControlPlane::start(ControlPlaneOptions::new(assets))
                    .await
                    .map_err(|e| e.0)
            })
            .await;
        started.as_ref().map_err(|e| EnvtestError(e.clone()))
    }

    /// Starts a control plane of its own (at most twice: a port taken between choosing and
    /// binding it fails the first attempt).
    pub async fn start(options: ControlPlaneOptions) -> Result<ControlPlane, EnvtestError> {
        let began = Instant::now();
        let binaries = process::Binaries::find(&options)?;
        let mut last = None;
        for _ in 0..2 {
            match ControlPlane::start_once(&options, &binaries, began).await {
                Ok(plane) => return Ok(plane),
                Err(e) => last = Some(e),
            }
            if began.elapsed() > options.start_timeout {
                break;
            }
        }
        Err(last.unwrap_or_else(|| EnvtestError("the control plane did not start".into())))
    }

    async fn start_once(
        options: &ControlPlaneOptions,
        binaries: &process::Binaries,
        began: Instant,
    ) -> Result<ControlPlane, EnvtestError> {
        let dir = process::temp_dir()?;
        // From here on the watchdog owns the directory: it goes on every failure below,
        // when `plane` (or the watchdog alone) is dropped.
        let watchdog = Watchdog::start(&dir)?;
        let mut plane = ControlPlane {
            assets: options.assets.clone(),
            dir: dir.clone(),
            url: String::new(),
            kubeconfig: dir.join("kubeconfig"),
            started_in: Duration::ZERO,
            controller_manager: binaries.controller_manager.is_some(),
            servers: std::sync::Mutex::new(Vec::new()),
            watchdog: std::sync::Mutex::new(Some(watchdog)),
        };
        let deadline = began + options.start_timeout;
        let files = certs::write(&dir)?;
        let etcd_port = process::free_port()?;
        plane.spawn(
            options,
            "etcd",
            &binaries.etcd,
            process::etcd_args(&binaries.etcd, &dir, etcd_port, process::free_port()?),
        )?;
        process::wait_etcd(|| plane.exited("etcd"), etcd_port, deadline).await?;
        let port = process::free_port()?;
        plane.url = format!("https://127.0.0.1:{port}");
        std::fs::write(&plane.kubeconfig, files.kubeconfig(&plane.url))
            .map_err(|e| fail(format_args!("writing {}", plane.kubeconfig.display()), e))?;
        let apiserver_args = process::apiserver_args(
            &files,
            etcd_port,
            port,
            binaries.controller_manager.is_some(),
        );
        plane.spawn(
            options,
            "kube-apiserver",
            &binaries.apiserver,
            apiserver_args,
        )?;
        process::wait_apiserver(|| plane.exited("kube-apiserver"), &files, port, deadline).await?;
        if let Some(kcm) = &binaries.controller_manager {
            let args = process::controller_manager_args(kcm, &files, &plane.kubeconfig);
            plane.spawn(options, "kube-controller-manager", kcm, args)?;
            process::wait_controller_manager(
                || plane.exited("kube-controller-manager"),
                &files,
                port,
                deadline,
            )
            .await?;
        }
        plane.started_in = began.elapsed();
        Ok(plane)
    }

    fn spawn(
        &self,
        options: &ControlPlaneOptions,
        name: &'static str,
        binary: &Path,
        args: Vec<String>,
    ) -> Result<(), EnvtestError> {
        let server = Server::spawn(name, binary, &args, &self.dir, options.attach_output)?;
        let pid = server.pid();
        // Kept before anything can fail, so that it is stopped and reaped whatever happens.
        self.servers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(server);
        if let Some(watchdog) = self
            .watchdog
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            watchdog.watch(pid)?;
        }
        Ok(())
    }

    /// How the server `name` ended, with the end of its log, when it is no longer running.
    fn exited(&self, name: &str) -> Option<String> {
        let mut servers = self.servers.lock().unwrap_or_else(|p| p.into_inner());
        servers
            .iter_mut()
            .find(|s| s.name() == name)
            .and_then(Server::exited)
    }

    /// The directory of binaries it runs.
    pub fn assets(&self) -> &Path {
        &self.assets
    }

    /// `https://127.0.0.1:<port>` of kube-apiserver.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A kubeconfig file for the admin user (`system:masters`), for `kubectl --kubeconfig`
    /// or a binary under test; it goes with the control plane.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The temporary directory holding the data, certificates, kubeconfig and the servers'
    /// logs (`etcd.log`, `kube-apiserver.log`, `kube-controller-manager.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How long the start took, readiness included.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// Whether kube-controller-manager runs.
    pub fn runs_controller_manager(&self) -> bool {
        self.controller_manager
    }

    /// A client of the admin user, built for the caller's runtime.
    #[cfg(feature = "test-env")]
    pub async fn client(&self) -> Result<kube::Client, EnvtestError> {
        let file = kube::config::Kubeconfig::read_from(&self.kubeconfig)
            .map_err(|e| fail("reading the control plane's kubeconfig", e))?;
        let config = kube::Config::from_custom_kubeconfig(file, &Default::default())
            .await
            .map_err(|e| fail("loading the control plane's kubeconfig", e))?;
        kube::Client::try_from(config).map_err(|e| fail("building a client", e))
    }

    /// Stops every server and removes the directory, waiting until both are done.
    pub fn stop(self) -> Result<(), EnvtestError> {
        self.shut_down()
    }

    fn shut_down(&self) -> Result<(), EnvtestError> {
        let watchdog = self
            .watchdog
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some(watchdog) = watchdog else {
            return Ok(());
        };
        let servers = std::mem::take(&mut *self.servers.lock().unwrap_or_else(|p| p.into_inner()));
        watchdog.finish(servers, &self.dir)
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        if let Err(e) = self.shut_down() {
            eprintln!("envtest: {e}");
        }
    }
}
