//! The webhook server's resident memory (VmRSS of a child process that only serves) before,
//! at its peak during, and 2 s after: 5,000 valid reviews over 20 kept-alive connections,
//! large reviews (10,000-object ConversionReviews, 3 MiB objects, 7.9 MB uids), and a flood
//! of 3,000 TLS connections, once at the default connection limit (the refusals counted) and
//! once with the limit raised to 4,000 (what each open connection costs).
//!
//! `cargo bench -p kube-codegen-runtime --features webhook --bench webhook_memory`
//! (`-- --quick` for a shorter run; `WEBHOOK_MEMORY_SETTLE_SECS` for a longer wait before
//! "after"). Loopback only. Each large review is also sent alone to a fresh server: what one
//! request costs.

use std::io::{BufRead, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kube::CustomResource;
use kube_codegen_runtime::webhook::conversion::Conversion;
use kube_codegen_runtime::webhook::{
    Defaulter, Denial, Request, Validator, Warnings, WebhookServer, mutate_path, validate_path,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

mod v1 {
    use super::*;

    /// The hub.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
    #[kube(
        group = "bench.example.com",
        version = "v1",
        kind = "Gadget",
        namespaced,
        schema = "disabled"
    )]
    pub struct GadgetSpec {
        pub color: String,
        pub size: i32,
    }
}

mod v2 {
    use super::*;

    /// The spoke: the same fields, nested.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize)]
    #[kube(
        group = "bench.example.com",
        version = "v2",
        kind = "Gadget",
        namespaced,
        schema = "disabled"
    )]
    pub struct GadgetSpec {
        pub look: Look,
    }

    #[derive(Clone, Debug, Serialize, Deserialize)]
    pub struct Look {
        pub color: String,
        pub size: i32,
    }
}

impl From<v2::Gadget> for v1::Gadget {
    fn from(g: v2::Gadget) -> Self {
        let spec = v1::GadgetSpec {
            color: g.spec.look.color,
            size: g.spec.look.size,
        };
        Self {
            metadata: g.metadata,
            spec,
        }
    }
}

impl From<v1::Gadget> for v2::Gadget {
    fn from(g: v1::Gadget) -> Self {
        let look = v2::Look {
            color: g.spec.color,
            size: g.spec.size,
        };
        Self {
            metadata: g.metadata,
            spec: v2::GadgetSpec { look },
        }
    }
}

struct Hooks;

impl Defaulter<v1::Gadget> for Hooks {
    async fn default(&self, g: &mut v1::Gadget, _: &Request<'_>) -> Result<Warnings, Denial> {
        if g.spec.color.is_empty() {
            g.spec.color = "red".to_owned();
        }
        Ok(Warnings::new())
    }
}

impl Validator<v1::Gadget> for Hooks {
    async fn validate_create(&self, g: &v1::Gadget, _: &Request<'_>) -> Result<Warnings, Denial> {
        if g.spec.size < 0 {
            return Err(Denial::new("spec.size: must not be negative"));
        }
        Ok(Warnings::new())
    }
}

/// The child: serves until its stdin closes.
fn serve(cert_dir: PathBuf) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut server = WebhookServer::new()
            .defaulting::<v1::Gadget, _>(mutate_path::<v1::Gadget>(), Hooks)
            .validating::<v1::Gadget, _>(validate_path::<v1::Gadget>(), Hooks)
            .conversion(
                "/convert",
                Conversion::hub::<v1::Gadget>().spoke::<v2::Gadget, v1::Gadget>(),
            );
        if let Ok(n) = std::env::var("WEBHOOK_MEMORY_MAX_CONNECTIONS") {
            server = server.max_connections(n.parse().unwrap());
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap().port());
        std::io::stdout().flush().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            let _ = stop.send(());
        });
        server
            .serve_on(listener, cert_dir, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
}

/// The serving child, its address and its memory.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(cert_dir: &Path, max_connections: Option<usize>) -> Self {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command
            .env("WEBHOOK_MEMORY_SERVE", cert_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        if let Some(n) = max_connections {
            command.env("WEBHOOK_MEMORY_MAX_CONNECTIONS", n.to_string());
        }
        let mut child = command.spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = SocketAddr::from(([127, 0, 0, 1], line.trim().parse().unwrap()));
        Self { child, addr }
    }

    fn rss(&self) -> u64 {
        rss_of(self.child.id())
    }

    fn stop(mut self) -> Duration {
        let started = Instant::now();
        drop(self.child.stdin.take());
        self.child.wait().unwrap();
        started.elapsed()
    }
}

/// VmRSS of `pid`, in bytes.
fn rss_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")
                    .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            })
        })
        .map_or(0, |kb| kb * 1024)
}

/// How many files `pid` has open: its listener and connections, mostly.
fn fds_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// The highest RSS seen while it runs, sampled every 20 ms.
struct Peak {
    max: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Peak {
    fn watch(pid: u32) -> Self {
        let (max, done) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (m, d) = (Arc::clone(&max), Arc::clone(&done));
        let task = tokio::spawn(async move {
            while !d.load(Ordering::Relaxed) {
                m.fetch_max(rss_of(pid), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        Self { max, done, task }
    }

    async fn end(self) -> u64 {
        self.done.store(true, Ordering::Relaxed);
        let _ = self.task.await;
        self.max.load(Ordering::Relaxed)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// A TLS client trusting only the bench's CA, one kept-alive connection.
struct Client {
    tls: TlsStream<TcpStream>,
    buf: Vec<u8>,
}

fn connector(ca_pem: &str) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(ca.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

impl Client {
    async fn connect(addr: SocketAddr, tls: &tokio_rustls::TlsConnector) -> std::io::Result<Self> {
        let tcp = TcpStream::connect(addr).await?;
        tcp.set_nodelay(true)?;
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let tls = tls.connect(name, tcp).await?;
        Ok(Self {
            tls,
            buf: Vec::new(),
        })
    }

    /// One POST: the status code and body; an error when the connection closed.
    async fn post(&mut self, path: &str, body: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
        let head = format!(
            "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        self.tls.write_all(head.as_bytes()).await?;
        self.tls.write_all(body).await?;
        self.tls.flush().await?;
        let end = loop {
            if let Some(i) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            self.fill().await?;
        };
        let head = String::from_utf8_lossy(&self.buf[..end]).to_ascii_lowercase();
        let code = head
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        while self.buf.len() < end + length {
            self.fill().await?;
        }
        let body = self.buf[end..end + length].to_vec();
        self.buf.drain(..end + length);
        Ok((code, body))
    }

    async fn fill(&mut self) -> std::io::Result<()> {
        let mut chunk = [0u8; 16 << 10];
        let n = self.tls.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
}

fn gadget(name: &str, color: &str, size: i32) -> Value {
    json!({"apiVersion": "bench.example.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "namespace": "default", "uid": "0b5c4a36-5d0d-4c8e-9d5e-1f1c1d2e3f40"},
        "spec": {"color": color, "size": size}})
}

fn admission(uid: &str, operation: &str, object: Value, old: Option<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "bench.example.com", "version": "v1", "kind": "Gadget"},
            "resource": {"group": "bench.example.com", "version": "v1", "resource": "gadgets"},
            "name": object["metadata"]["name"], "namespace": "default",
            "operation": operation, "userInfo": {"username": "admin"},
            "object": object, "oldObject": old, "dryRun": false
        }
    }))
    .unwrap()
}

fn conversion(uid: &str, objects: &[Value]) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": "bench.example.com/v2", "objects": objects}
    }))
    .unwrap()
}

/// Whether `body` is the right answer to request `i` of the steady phase.
fn correct(i: usize, code: u16, body: &[u8]) -> bool {
    let Ok(review) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let response = &review["response"];
    code == 200
        && response["uid"] == format!("r-{i}")
        && match i % 3 {
            0 => response["allowed"] == true && !response["patch"].is_null(),
            1 => response["allowed"] == false,
            _ => {
                response["convertedObjects"][0]["spec"]["look"]["color"] == "blue"
                    && response["result"]["status"] == "Success"
            }
        }
}

fn steady_request(i: usize) -> (String, Vec<u8>) {
    let uid = format!("r-{i}");
    match i % 3 {
        0 => (
            mutate_path::<v1::Gadget>(),
            admission(&uid, "CREATE", gadget(&format!("g{i}"), "", 1), None),
        ),
        1 => (
            validate_path::<v1::Gadget>(),
            admission(&uid, "CREATE", gadget(&format!("g{i}"), "blue", -1), None),
        ),
        _ => (
            "/convert".to_owned(),
            conversion(&uid, &[gadget(&format!("g{i}"), "blue", 2)]),
        ),
    }
}

struct Row {
    phase: String,
    before: u64,
    peak: u64,
    after: u64,
    notes: String,
}

/// Settles (2 s, or `WEBHOOK_MEMORY_SETTLE_SECS`), then the RSS.
async fn settled(server: &Server) -> u64 {
    let secs = std::env::var("WEBHOOK_MEMORY_SETTLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    tokio::time::sleep(Duration::from_secs(secs)).await;
    server.rss()
}

async fn steady(server: &Server, tls: &tokio_rustls::TlsConnector, total: usize) -> Row {
    let before = server.rss();
    let peak = Peak::watch(server.child.id());
    let started = Instant::now();
    let connections = 20;
    let mut tasks = Vec::new();
    for c in 0..connections {
        let mut client = Client::connect(server.addr, tls).await.unwrap();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut right = 0;
            for i in (c..total).step_by(connections) {
                let (path, body) = steady_request(i);
                let sent = Instant::now();
                let (code, answer) = client.post(&path, &body).await.unwrap();
                latencies.push(sent.elapsed());
                right += usize::from(correct(i, code, &answer));
            }
            (latencies, right)
        }));
    }
    let mut latencies = Vec::new();
    let mut right = 0;
    for task in tasks {
        let (l, r) = task.await.unwrap();
        latencies.extend(l);
        right += r;
    }
    let elapsed = started.elapsed();
    let peak = peak.end().await;
    latencies.sort_unstable();
    let p = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Row {
        phase: format!("{total} reviews, 20 connections"),
        before,
        peak,
        after: settled(server).await,
        notes: format!(
            "{right}/{total} correct, {:.0}/s, p50 {:.1} ms, p99 {:.1} ms",
            total as f64 / elapsed.as_secs_f64(),
            latencies[latencies.len() / 2].as_secs_f64() * 1e3,
            p(0.99).as_secs_f64() * 1e3
        ),
    }
}

/// The large reviews: `(what, path, body)`.
fn large_reviews() -> Vec<(&'static str, String, Vec<u8>)> {
    let objects: Vec<Value> = (0..10_000)
        .map(|i| {
            let mut g = gadget(&format!("gadget-{i:05}"), "blue", i);
            g["metadata"]["labels"] = json!({"app": "bench", "tier": format!("t{}", i % 7)});
            g["metadata"]["annotations"] = json!({"note": "x".repeat(400)});
            g
        })
        .collect();
    let convert = conversion("big", &objects);
    // A 3 MiB object (the API server's request limit), created and updated.
    let annotations: serde_json::Map<String, Value> = (0..30_000)
        .map(|i| (format!("bench.example.com/a{i:05}"), json!("y".repeat(70))))
        .collect();
    let mut fat = gadget("fat", "", 1);
    fat["metadata"]["annotations"] = Value::Object(annotations);
    let create = admission("fat", "CREATE", fat.clone(), None);
    let update = admission("fat", "UPDATE", fat.clone(), Some(fat));
    let long_uid = admission(&"u".repeat(7_900_000), "CREATE", gadget("u", "", 1), None);
    // What no API server sends but anyone reaching the port can: 8 MB of tiny values.
    let mut zeros = gadget("zeros", "", 1);
    zeros["spec"]["pad"] = Value::Array(vec![json!(0); 3_900_000]);
    let zeros = admission("zeros", "CREATE", zeros, None);
    vec![
        ("conversion of 10,000", "/convert".to_owned(), convert),
        ("3 MiB create, mutate", mutate_path::<v1::Gadget>(), create),
        (
            "3 MiB update, validate",
            validate_path::<v1::Gadget>(),
            update,
        ),
        ("7.9 MB uid", mutate_path::<v1::Gadget>(), long_uid),
        ("8 MB of zeros, mutate", mutate_path::<v1::Gadget>(), zeros),
    ]
}

/// Each large review alone, on a fresh server: what one request costs.
async fn alone(dir: &Path, tls: &tokio_rustls::TlsConnector) -> Vec<Row> {
    let mut rows = Vec::new();
    for (what, path, body) in large_reviews() {
        let server = Server::start(dir, None);
        let mut client = Client::connect(server.addr, tls).await.unwrap();
        let (p, b) = steady_request(0);
        client.post(&p, &b).await.unwrap();
        let before = settled(&server).await;
        let peak = Peak::watch(server.child.id());
        let (code, _) = client.post(&path, &body).await.unwrap();
        let peak = peak.end().await;
        rows.push(Row {
            phase: format!("one {what} ({:.1} MB) alone", body.len() as f64 / 1e6),
            before,
            peak,
            after: settled(&server).await,
            notes: format!(
                "{code}; peak - before: {}",
                mib(peak.saturating_sub(before))
            ),
        });
        server.stop();
    }
    rows
}

async fn large(server: &Server, tls: &tokio_rustls::TlsConnector, rounds: usize) -> Row {
    let before = server.rss();
    let peak = Peak::watch(server.child.id());
    let reviews = large_reviews();
    let mut answers = std::collections::BTreeMap::<String, usize>::new();
    for _ in 0..rounds {
        let mut tasks = Vec::new();
        for (what, path, body) in &reviews {
            let mut client = Client::connect(server.addr, tls).await.unwrap();
            let (what, path, body) = (*what, path.clone(), body.clone());
            tasks.push(tokio::spawn(async move {
                let code = client.post(&path, &body).await.map_or(0, |(code, _)| code);
                format!("{what}: {code}")
            }));
        }
        for task in tasks {
            *answers.entry(task.await.unwrap()).or_default() += 1;
        }
    }
    let peak = peak.end().await;
    Row {
        phase: format!("large reviews, {rounds} rounds of 5 at once"),
        before,
        peak,
        after: settled(server).await,
        notes: answers
            .iter()
            .map(|(a, n)| format!("{n}x {a}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

async fn flood(
    server: &Server,
    tls: &tokio_rustls::TlsConnector,
    connections: usize,
    limit: &str,
) -> Row {
    let before = server.rss();
    let peak = Peak::watch(server.child.id());
    // A connection opened before the flood, answering throughout.
    let mut steady = Client::connect(server.addr, tls).await.unwrap();
    let mut opened = Vec::new();
    let mut refused = 0;
    let mut batch = tokio::task::JoinSet::new();
    for _ in 0..connections {
        let (addr, tls) = (server.addr, tls.clone());
        batch.spawn(async move { Client::connect(addr, &tls).await });
        if batch.len() == 100 {
            while let Some(done) = batch.join_next().await {
                match done.unwrap() {
                    Ok(client) => opened.push(client),
                    Err(_) => refused += 1,
                }
            }
        }
    }
    while let Some(done) = batch.join_next().await {
        match done.unwrap() {
            Ok(client) => opened.push(client),
            Err(_) => refused += 1,
        }
    }
    let open_rss = server.rss();
    let mut answered = 0;
    for i in 0..30 {
        let (path, body) = steady_request(i);
        if let Ok((code, answer)) = steady.post(&path, &body).await {
            answered += usize::from(correct(i, code, &answer));
        }
    }
    let held = opened.len();
    let open_fds = fds_of(server.child.id());
    drop(opened);
    drop(steady);
    let peak = peak.end().await;
    let per = open_rss.saturating_sub(before) / held.max(1) as u64;
    let after = settled(server).await;
    Row {
        phase: format!("{connections}-connection flood, limit {limit}"),
        before,
        peak,
        after,
        notes: format!(
            "{held} open (RSS {}, {:.1} KiB each; server fds {open_fds}, {} after), {refused} refused; reviews on a connection opened before: {answered}/30 correct",
            mib(open_rss),
            per as f64 / 1024.0,
            fds_of(server.child.id()),
        ),
    }
}

fn main() {
    if let Some(dir) = std::env::var_os("WEBHOOK_MEMORY_SERVE") {
        serve(PathBuf::from(dir));
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    let dir = std::env::temp_dir().join(format!("webhook-memory-{}", std::process::id()));
    let ca =
        kube_codegen_runtime::webhook::dev::certificate(&dir, &["127.0.0.1".to_owned()]).unwrap();
    let tls = connector(&ca);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let rows = runtime.block_on(async {
        let mut rows = alone(&dir, &tls).await;
        let server = Server::start(&dir, None);
        // One review, so the baseline has the server's first allocations.
        let mut warm = Client::connect(server.addr, &tls).await.unwrap();
        let (path, body) = steady_request(0);
        warm.post(&path, &body).await.unwrap();
        drop(warm);
        let baseline = settled(&server).await;
        rows.push(Row {
            phase: "started, one review answered".to_owned(),
            before: baseline,
            peak: baseline,
            after: baseline,
            notes: String::new(),
        });
        rows.push(steady(&server, &tls, if quick { 1_000 } else { 5_000 }).await);
        rows.push(large(&server, &tls, if quick { 2 } else { 5 }).await);
        let flood_size = if quick { 1_500 } else { 3_000 };
        rows.push(flood(&server, &tls, flood_size, "1024 (default)").await);
        rows.push(steady(&server, &tls, if quick { 1_000 } else { 5_000 }).await);
        let stopped = server.stop();
        println!("stopped (stdin closed) in {stopped:?}");

        let raised = Server::start(&dir, Some(4_000));
        let before = settled(&raised).await;
        let mut row = flood(&raised, &tls, flood_size, "4000").await;
        row.before = before;
        rows.push(row);
        raised.stop();
        rows
    });
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "\nwebhook server RSS (child process; peak sampled every 20 ms; after = once settled)\n"
    );
    println!("| phase | before | peak | after | |\n|---|---|---|---|---|");
    for row in rows {
        println!(
            "| {} | {} | {} | {} | {} |",
            row.phase,
            mib(row.before),
            mib(row.peak),
            mib(row.after),
            row.notes
        );
    }
}
