//! The envtest backend's process lifecycle, in CI: this test binary is also its own
//! stand-in etcd and kube-apiserver (symlinks named after them, in directories whose name
//! says how to behave), so starting, readiness, failures and clean-up are checked without
//! the real binaries. Every check ends with no process left whose command line names the
//! assets directory and no control-plane directory left, also when the test process that
//! started the control plane panicked or was killed.
//!
//! With `KUBEBUILDER_ASSETS` set, one more case starts the real binaries and lists
//! namespaces through `kube::Client`.
//!
//! `harness = false`: the binary decides from its own name whether it is a stand-in.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fake_apiserver::envtest::{ControlPlane, ControlPlaneOptions};

fn main() {
    let argv0 = std::env::args().next().unwrap_or_default();
    let name = Path::new(&argv0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let behaviour = Path::new(&argv0)
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.as_str() {
        "etcd" => return stand_in::etcd(),
        "kube-apiserver" => return stand_in::apiserver(&behaviour),
        _ => {}
    }
    if let Ok(mode) = std::env::var("ENVTEST_TEST_CHILD") {
        return child(&mode);
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    type Case = fn(&tokio::runtime::Runtime);
    let cases: [(&str, Case); 6] = [
        (
            "stand_ins_start_serve_and_stop_leaving_nothing",
            started_and_stopped,
        ),
        ("a_server_that_exits_is_named_with_its_log", server_exits),
        ("a_server_never_ready_times_out", never_ready),
        ("a_server_ignoring_sigterm_is_killed", ignores_sigterm),
        ("missing_binaries_are_named", missing_binaries),
        (
            "a_test_process_that_panics_or_is_killed_leaves_nothing",
            process_dies,
        ),
    ];
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    for (name, case) in cases {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let began = Instant::now();
        case(&runtime);
        println!("test {name} ... ok ({:.1}s)", began.elapsed().as_secs_f64());
    }
    if ControlPlane::assets_from_env().is_some() {
        runtime.block_on(real_binaries());
        println!("test real_binaries_serve_a_kube_client ... ok");
    }
}

/// A directory `<tmp>/<behaviour>/` with `etcd` and `kube-apiserver` linked to this binary,
/// fresh on each call.
fn assets(behaviour: &str) -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let root =
        std::env::temp_dir().join(format!("envtest-stand-ins-{}-{call}", std::process::id()));
    let dir = root.join(behaviour);
    std::fs::create_dir_all(&dir).unwrap();
    let me = std::env::current_exe().unwrap();
    for name in ["etcd", "kube-apiserver"] {
        std::os::unix::fs::symlink(&me, dir.join(name)).unwrap();
    }
    dir
}

/// Processes whose command line names `dir`.
fn running_from(dir: &Path) -> Vec<String> {
    let out = Command::new("pgrep")
        .arg("-af")
        .arg(dir.to_string_lossy().as_ref())
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Control-plane directories of process `pid`.
fn planes_of(pid: u32) -> Vec<PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with(&format!("kube-envtest-{pid}-"))
            })
        })
        .collect()
}

/// Waits up to 10 s for no process of `assets` and no control-plane directory of `pid`.
fn assert_nothing_left(assets: &Path, pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let procs = running_from(assets);
        let dirs = planes_of(pid);
        if procs.is_empty() && dirs.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "left behind: processes {procs:?}, directories {dirs:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn options(assets: &Path) -> ControlPlaneOptions {
    ControlPlaneOptions::new(assets).start_timeout(Duration::from_secs(20))
}

fn started_and_stopped(rt: &tokio::runtime::Runtime) {
    let assets = assets("good");
    let plane = rt.block_on(ControlPlane::start(options(&assets))).unwrap();
    assert!(
        plane.url().starts_with("https://127.0.0.1:"),
        "{}",
        plane.url()
    );
    assert!(!plane.runs_controller_manager());
    let kubeconfig = std::fs::read_to_string(plane.kubeconfig()).unwrap();
    assert!(kubeconfig.contains("token: "), "{kubeconfig}");
    assert_eq!(
        running_from(&assets).len(),
        2,
        "etcd and kube-apiserver run"
    );
    // Through TLS with the control plane's CA and the admin token, to the stand-in's fake.
    rt.block_on(async {
        let client = plane.client().await.unwrap();
        let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
        let names: Vec<_> = namespaces
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|n| n.metadata.name)
            .collect();
        assert!(names.contains(&"default".to_owned()), "{names:?}");
    });
    let dir = plane.dir().to_path_buf();
    plane.stop().unwrap();
    assert!(!dir.exists(), "{} removed by stop()", dir.display());
    assert!(
        running_from(&assets).is_empty(),
        "stop() waits for the servers"
    );
    assert_nothing_left(&assets, std::process::id());
}

fn server_exits(rt: &tokio::runtime::Runtime) {
    let assets = assets("exits");
    let e = rt
        .block_on(ControlPlane::start(options(&assets)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("kube-apiserver: kube-apiserver exited"), "{e}");
    assert!(
        e.contains("flag provided but not defined: -no-such-flag"),
        "{e}"
    );
    assert_nothing_left(&assets, std::process::id());
}

fn never_ready(rt: &tokio::runtime::Runtime) {
    let assets = assets("unready");
    let began = Instant::now();
    let e = rt
        .block_on(ControlPlane::start(
            ControlPlaneOptions::new(&assets).start_timeout(Duration::from_secs(2)),
        ))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not ready before the start timeout"), "{e}");
    assert!(e.contains("/readyz: 500"), "{e}");
    assert!(
        began.elapsed() < Duration::from_secs(15),
        "{:?}",
        began.elapsed()
    );
    assert_nothing_left(&assets, std::process::id());
}

fn ignores_sigterm(rt: &tokio::runtime::Runtime) {
    let assets = assets("stubborn");
    let plane = rt.block_on(ControlPlane::start(options(&assets))).unwrap();
    let began = Instant::now();
    plane.stop().unwrap();
    // SIGTERM ignored: SIGKILL after the 1 s grace.
    assert!(
        began.elapsed() >= Duration::from_millis(900),
        "{:?}",
        began.elapsed()
    );
    assert_nothing_left(&assets, std::process::id());
}

fn missing_binaries(rt: &tokio::runtime::Runtime) {
    let empty = std::env::temp_dir().join(format!("envtest-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let e = rt
        .block_on(ControlPlane::start(ControlPlaneOptions::new(&empty)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no etcd binary"), "{e}");
    assert!(e.contains("kube-codegen envtest fetch"), "{e}");
    let e = rt
        .block_on(ControlPlane::start(
            ControlPlaneOptions::new(assets("good")).controller_manager(true),
        ))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no kube-controller-manager binary"), "{e}");
    assert!(planes_of(std::process::id()).is_empty());
}

/// A test process (this binary again) starts a control plane and then panics, or is
/// killed while it runs: the watchdog stops the servers and removes the directory.
fn process_dies(_rt: &tokio::runtime::Runtime) {
    for mode in ["panic", "kill"] {
        let assets = assets("good");
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env("ENVTEST_TEST_CHILD", mode)
            .env("KUBEBUILDER_ASSETS", &assets)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        assert!(line.starts_with("started "), "{mode}: {line:?}");
        assert_eq!(running_from(&assets).len(), 2, "{mode}: servers run");
        if mode == "kill" {
            child.kill().unwrap();
        }
        let status = child.wait().unwrap();
        assert!(!status.success(), "{mode}: {status}");
        assert_nothing_left(&assets, pid);
    }
}

/// The child of `process_dies`: the shared control plane of `KUBEBUILDER_ASSETS`, then a
/// panic, or a wait to be killed.
fn child(mode: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let plane = rt.block_on(ControlPlane::shared()).unwrap();
    println!("started {}", plane.dir().display());
    if mode == "panic" {
        panic!("a failed assertion in a test");
    }
    std::thread::sleep(Duration::from_secs(60));
}

async fn real_binaries() {
    let plane = ControlPlane::shared().await.unwrap();
    println!(
        "real control plane at {} started in {:.1}s (controller manager: {})",
        plane.url(),
        plane.started_in().as_secs_f64(),
        plane.runs_controller_manager()
    );
    let client = plane.client().await.unwrap();
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let list = namespaces.list(&Default::default()).await.unwrap();
    assert!(
        list.items
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some("kube-system")),
        "kube-system exists on a real server"
    );
}

/// The stand-ins: just enough of etcd and kube-apiserver for the control plane's start and
/// stop, behaving as the directory they are linked from says.
mod stand_in {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    type Body = http_body_util::combinators::BoxBody<Bytes, hyper::Error>;

    /// One request: the admin token required (and taken off: the fake has tokens of its
    /// own), then passed to the fake on a connection of its own.
    async fn forward(
        mut request: http::Request<Incoming>,
        backend: SocketAddr,
        token: String,
        unready: bool,
    ) -> Result<http::Response<Body>, std::io::Error> {
        let refuse = |status: u16| {
            let body = Full::new(Bytes::from_static(b"no\n"))
                .map_err(|never| match never {})
                .boxed();
            let mut response = http::Response::new(body);
            *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
            Ok(response)
        };
        let bearer = format!("Bearer {token}");
        if request
            .headers()
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            != Some(bearer.as_str())
        {
            return refuse(401);
        }
        if unready && request.uri().path() == "/readyz" {
            return refuse(500);
        }
        request.headers_mut().remove(http::header::AUTHORIZATION);
        let tcp = tokio::net::TcpStream::connect(backend).await?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .map_err(std::io::Error::other)?;
        tokio::spawn(conn);
        let response = sender
            .send_request(request)
            .await
            .map_err(std::io::Error::other)?;
        Ok(response.map(BodyExt::boxed))
    }

    fn flag(name: &str) -> Option<String> {
        let prefix = format!("--{name}=");
        std::env::args().find_map(|a| a.strip_prefix(&prefix).map(str::to_owned))
    }

    /// Answers every request on the client URL's port with etcd's health document.
    pub fn etcd() {
        if std::env::args().any(|a| a == "--help") {
            println!("      --advertise-client-urls  (stand-in)");
            return;
        }
        let url = flag("listen-client-urls").expect("--listen-client-urls");
        let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
        tokio::runtime::Runtime::new().unwrap().block_on(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = socket.read(&mut buf).await;
                    let body = r#"{"health":"true"}"#;
                    let _ = socket
                        .write_all(
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                                body.len()
                            )
                            .as_bytes(),
                        )
                        .await;
                });
            }
        });
    }

    /// TLS on `--secure-port` with `--tls-cert-file`, the bearer token of
    /// `--token-auth-file` required, and the fake behind it.
    pub fn apiserver(behaviour: &str) {
        if std::env::args().any(|a| a == "--help") {
            return;
        }
        if behaviour == "exits" {
            eprintln!("flag provided but not defined: -no-such-flag");
            std::process::exit(2);
        }
        let port: u16 = flag("secure-port").unwrap().parse().unwrap();
        let cert = std::fs::read(flag("tls-cert-file").unwrap()).unwrap();
        let key = std::fs::read(flag("tls-private-key-file").unwrap()).unwrap();
        let tokens = std::fs::read_to_string(flag("token-auth-file").unwrap()).unwrap();
        let token = tokens.split(',').next().unwrap().to_owned();
        let unready = behaviour == "unready";
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(async move {
                if behaviour == "stubborn" {
                    let mut term =
                        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                            .unwrap();
                    tokio::spawn(async move { while term.recv().await.is_some() {} });
                }
                let fake = fake_apiserver::FakeApiServer::new();
                let served = fake
                    .serve(SocketAddr::from(([127, 0, 0, 1], 0)))
                    .await
                    .unwrap();
                let backend: SocketAddr =
                    served.url().trim_start_matches("http://").parse().unwrap();
                use rustls::pki_types::pem::PemObject;
                let certs = rustls::pki_types::CertificateDer::pem_slice_iter(&cert)
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap();
                let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(&key).unwrap();
                let config = rustls::ServerConfig::builder_with_provider(Arc::new(
                    rustls::crypto::ring::default_provider(),
                ))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .unwrap();
                let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                    .await
                    .unwrap();
                loop {
                    let (socket, _) = listener.accept().await.unwrap();
                    let acceptor = acceptor.clone();
                    let token = token.clone();
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(socket).await else {
                            return;
                        };
                        let service = hyper::service::service_fn(move |request| {
                            forward(request, backend, token.clone(), unready)
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                            .await;
                    });
                }
            });
    }
}
