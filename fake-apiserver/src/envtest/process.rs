//! The servers as processes: finding the binaries, their command lines (controller-runtime's
//! envtest flags, adjusted for what each binary accepts), starting them in process groups of
//! their own, waiting until they serve, and the watchdog that stops them.

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use super::certs::Files;
use super::error::{EnvtestError, fail};
use super::options::ControlPlaneOptions;

/// The binaries of an assets directory.
pub(super) struct Binaries {
    pub(super) etcd: PathBuf,
    pub(super) apiserver: PathBuf,
    pub(super) controller_manager: Option<PathBuf>,
}

impl Binaries {
    pub(super) fn find(options: &ControlPlaneOptions) -> Result<Binaries, EnvtestError> {
        let dir = &options.assets;
        let at = |name: &str| -> Option<PathBuf> {
            let path = dir.join(name);
            path.is_file().then_some(path)
        };
        let need = |name: &str| {
            at(name).ok_or_else(|| {
                EnvtestError(format!(
                    "{}: no {name} binary; `kube-codegen envtest fetch` downloads etcd and kube-apiserver",
                    dir.display()
                ))
            })
        };
        let controller_manager = match options.controller_manager {
            Some(true) => Some(need("kube-controller-manager")?),
            Some(false) => None,
            None => at("kube-controller-manager"),
        };
        Ok(Binaries {
            etcd: need("etcd")?,
            apiserver: need("kube-apiserver")?,
            controller_manager,
        })
    }
}

/// A fresh private directory under the system's temporary directory.
pub(super) fn temp_dir() -> Result<PathBuf, EnvtestError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for attempt in 0u64..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let dir = base.join(format!(
            "kube-envtest-{}-{}",
            std::process::id(),
            crate::meta::random_suffix(nanos ^ attempt.wrapping_mul(0x9E37_79B9))
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(format_args!("creating {}", dir.display()), e)),
        }
    }
    Err(EnvtestError(format!(
        "no fresh directory under {}",
        base.display()
    )))
}

/// A loopback port free when asked (envtest's way too: another process may take it before
/// the server binds it, which fails that start and the next attempt picks again).
pub(super) fn free_port() -> Result<u16, EnvtestError> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| fail("choosing a port", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| fail("choosing a port", e))
}

/// What `binary --help` prints (both streams), to learn which flags it takes.
fn help(binary: &Path) -> String {
    Command::new(binary)
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .map(|o| {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            text
        })
        .unwrap_or_default()
}

pub(super) fn etcd_args(binary: &Path, dir: &Path, client: u16, peer: u16) -> Vec<String> {
    let help = help(binary);
    let client_url = format!("http://127.0.0.1:{client}");
    let mut args = vec![
        format!("--data-dir={}", dir.join("etcd").display()),
        format!("--listen-client-urls={client_url}"),
        format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
    ];
    // Released etcd refuses explicit listen URLs without advertised ones; a build that
    // advertises what it listens on has no such flag, and refuses it.
    if help.contains("advertise-client-urls") {
        args.push(format!("--advertise-client-urls={client_url}"));
    }
    // A test's data need not survive a power cut (etcd 3.5 and later).
    if help.contains("unsafe-no-fsync") {
        args.push("--unsafe-no-fsync=true".into());
    }
    args
}

pub(super) fn apiserver_args(
    files: &Files,
    etcd: u16,
    port: u16,
    controller_manager: bool,
) -> Vec<String> {
    let mut args = vec![
        format!("--etcd-servers=http://127.0.0.1:{etcd}"),
        "--bind-address=127.0.0.1".to_owned(),
        format!("--secure-port={port}"),
        format!("--cert-dir={}", files.dir.display()),
        format!("--tls-cert-file={}", files.serving_cert.display()),
        format!("--tls-private-key-file={}", files.serving_key.display()),
        format!("--token-auth-file={}", files.tokens.display()),
        "--authorization-mode=RBAC".to_owned(),
        "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
        "--allow-privileged=true".to_owned(),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={}", files.sa_public.display()),
        format!(
            "--service-account-signing-key-file={}",
            files.sa_key.display()
        ),
    ];
    // Without the controller manager no ServiceAccount `default` is ever made, and the
    // ServiceAccount admission plugin would refuse every Pod (envtest turns it off too).
    if !controller_manager {
        args.push("--disable-admission-plugins=ServiceAccount".to_owned());
    }
    args
}

pub(super) fn controller_manager_args(
    binary: &Path,
    files: &Files,
    kubeconfig: &Path,
) -> Vec<String> {
    let mut controllers = "*".to_owned();
    // A distribution's extra controller that needs its own service CA; off where it exists.
    if help(binary).contains("service-ca-certificate-publisher-controller") {
        controllers.push_str(",-service-ca-certificate-publisher-controller");
    }
    vec![
        format!("--kubeconfig={}", kubeconfig.display()),
        // No serving port: nothing here scrapes it, and it would need its own credentials.
        "--secure-port=0".to_owned(),
        format!("--controllers={controllers}"),
        format!(
            "--service-account-private-key-file={}",
            files.sa_key.display()
        ),
        format!("--root-ca-file={}", files.ca.display()),
        "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
        "--leader-elect=false".to_owned(),
    ]
}

/// A server started by this process.
pub(super) struct Server {
    name: &'static str,
    log: Option<PathBuf>,
    child: Child,
}

impl Server {
    pub(super) fn spawn(
        name: &'static str,
        binary: &Path,
        args: &[String],
        dir: &Path,
        attach_output: bool,
    ) -> Result<Server, EnvtestError> {
        let mut command = Command::new(binary);
        command.args(args).stdin(Stdio::null()).process_group(0);
        let log = if attach_output {
            None
        } else {
            let path = dir.join(format!("{name}.log"));
            let file = std::fs::File::create(&path)
                .map_err(|e| fail(format_args!("creating {}", path.display()), e))?;
            let copy = file
                .try_clone()
                .map_err(|e| fail(format_args!("opening {}", path.display()), e))?;
            command.stdout(copy).stderr(file);
            Some(path)
        };
        let child = command
            .spawn()
            .map_err(|e| fail(format_args!("starting {}", binary.display()), e))?;
        Ok(Server { name, log, child })
    }

    pub(super) fn name(&self) -> &'static str {
        self.name
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `None` while it runs; else how it ended and the last lines of its log.
    pub(super) fn exited(&mut self) -> Option<String> {
        let status = self.child.try_wait().ok()??;
        Some(format!(
            "{} exited ({status}){}",
            self.name,
            self.log_tail()
        ))
    }

    fn log_tail(&self) -> String {
        let Some(path) = &self.log else {
            return String::new();
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(12)..].join("\n");
        format!("; the end of {}:\n{tail}", path.display())
    }
}

/// The `sh` process that stops the servers and removes the directory when this process
/// lets go of its pipe, however it ends.
pub(super) struct Watchdog {
    child: Child,
    pipe: Option<ChildStdin>,
}

/// Reads one process group id per line until end of file; then `SIGTERM` to each group,
/// up to 1 s for them to go (the data is thrown away: no drain is worth waiting for),
/// `SIGKILL` to what is left, and the directory removed.
/// Interrupts are ignored: Ctrl-C ends the test process, which closes the pipe.
const WATCHDOG: &str = r#"trap '' INT HUP
dir=$1
groups=""
while read -r group; do groups="$groups $group"; done
for g in $groups; do kill -TERM -"$g" 2>/dev/null; done
i=0
while [ "$i" -lt 10 ]; do
  alive=""
  for g in $groups; do kill -0 -"$g" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.1
  i=$((i + 1))
done
for g in $groups; do kill -KILL -"$g" 2>/dev/null; done
rm -rf -- "$dir"
"#;

impl Watchdog {
    pub(super) fn start(dir: &Path) -> Result<Watchdog, EnvtestError> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("envtest-watchdog")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(dir);
                fail("starting the envtest watchdog (sh)", e)
            })?;
        let pipe = child.stdin.take();
        Ok(Watchdog { child, pipe })
    }

    /// Adds the process group of `pid` (a server started with its own group).
    pub(super) fn watch(&mut self, pid: u32) -> Result<(), EnvtestError> {
        let pipe = self
            .pipe
            .as_mut()
            .ok_or_else(|| EnvtestError("the watchdog is finished".into()))?;
        writeln!(pipe, "{pid}")
            .and_then(|()| pipe.flush())
            .map_err(|e| fail("telling the watchdog", e))
    }

    /// Stops the servers now: closes the pipe and waits for the watchdog (about a second);
    /// then any server still running (the watchdog died, or never heard of it) is killed
    /// from here, every server is reaped (they are this process's children), and the
    /// directory is removed if the watchdog could not.
    pub(super) fn finish(
        mut self,
        mut servers: Vec<Server>,
        dir: &Path,
    ) -> Result<(), EnvtestError> {
        drop(self.pipe.take());
        // Reaped as they go, so that the watchdog does not wait on their zombies.
        let deadline = Instant::now() + Duration::from_secs(3);
        let status = loop {
            for server in &mut servers {
                let _ = server.child.try_wait();
            }
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => break None,
            }
        };
        let status = match status {
            Some(status) => status,
            None => {
                let _ = self.child.kill();
                self.child
                    .wait()
                    .map_err(|e| fail("waiting for the watchdog", e))?
            }
        };
        for mut server in servers {
            if matches!(server.child.try_wait(), Ok(None)) {
                let _ = Command::new("kill")
                    .arg("-KILL")
                    .arg(format!("-{}", server.pid()))
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
                let _ = server.child.kill();
            }
            let _ = server.child.wait();
        }
        if dir.exists() {
            let _ = std::fs::remove_dir_all(dir);
        }
        if status.success() {
            Ok(())
        } else {
            Err(EnvtestError(format!(
                "the envtest watchdog failed ({status})"
            )))
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Not finished (a failed start): closing the pipe is enough; the watchdog cleans up.
        drop(self.pipe.take());
    }
}

/// Until `check` is `Some`, `exited` reports an end, or the deadline passes.
async fn until<T, F, Fut>(
    what: &str,
    exited: impl Fn() -> Option<String>,
    deadline: Instant,
    mut check: F,
) -> Result<T, EnvtestError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let mut last;
    loop {
        if let Some(end) = exited() {
            return Err(EnvtestError(format!("{what}: {end}")));
        }
        match check().await {
            Ok(t) => return Ok(t),
            Err(e) => last = e,
        }
        if Instant::now() > deadline {
            return Err(EnvtestError(format!(
                "{what}: not ready before the start timeout (last: {last}); \
                 set {} to wait longer",
                super::options::START_TIMEOUT_VAR
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// etcd answers `GET /health` with 200.
pub(super) async fn wait_etcd(
    exited: impl Fn() -> Option<String>,
    port: u16,
    deadline: Instant,
) -> Result<(), EnvtestError> {
    until("etcd", exited, deadline, || async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| e.to_string())?;
        stream
            .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .await
            .map_err(|e| e.to_string())?;
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut answer))
            .await
            .map_err(|_| "no answer within 2s".to_owned())?
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&answer);
        if text.starts_with("HTTP/1.1 200") || text.starts_with("HTTP/1.0 200") {
            Ok(())
        } else {
            Err(text.lines().next().unwrap_or("").to_owned())
        }
    })
    .await
}

/// A GET on kube-apiserver as the admin user: the status and body.
pub(super) async fn get(files: &Files, port: u16, path: &str) -> Result<(u16, String), String> {
    use http_body_util::BodyExt;
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(files.ca_pem.as_bytes()).flatten() {
        let _ = roots.add(ca);
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
    tokio::spawn(conn);
    let request = http::Request::get(path)
        .header(http::header::HOST, format!("127.0.0.1:{port}"))
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {}", files.token),
        )
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .map_err(|e| e.to_string())?;
    let exchange = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .map_err(|_| "no answer within 5s".to_owned())?
}

/// kube-apiserver answers `GET /readyz` with `ok` and namespace `default` exists.
pub(super) async fn wait_apiserver(
    exited: impl Fn() -> Option<String>,
    files: &Files,
    port: u16,
    deadline: Instant,
) -> Result<(), EnvtestError> {
    until("kube-apiserver", exited, deadline, || async move {
        let (status, body) = get(files, port, "/readyz").await?;
        if status != 200 || body.trim() != "ok" {
            return Err(format!("/readyz: {status} {}", body.trim()));
        }
        match get(files, port, "/api/v1/namespaces/default").await? {
            (200, _) => Ok(()),
            (status, body) => Err(format!("namespace default: {status} {}", body.trim())),
        }
    })
    .await
}

/// The controller manager runs its controllers: the ServiceAccount `default` of namespace
/// `default` exists (its serviceaccount controller makes it).
pub(super) async fn wait_controller_manager(
    exited: impl Fn() -> Option<String>,
    files: &Files,
    port: u16,
    deadline: Instant,
) -> Result<(), EnvtestError> {
    until("kube-controller-manager", exited, deadline, || async move {
        match get(
            files,
            port,
            "/api/v1/namespaces/default/serviceaccounts/default",
        )
        .await?
        {
            (200, _) => Ok(()),
            (status, body) => Err(format!("ServiceAccount default: {status} {}", body.trim())),
        }
    })
    .await
}
