//! `kube-codegen envtest fetch` and `list` against a loopback server playing controller-tools'
//! release index and its archives: the newest release of a series, redirects, digests,
//! truncated archives and missing platforms, and nothing left behind on a failure.
#![cfg(all(feature = "cluster", unix))]

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A gzipped tar laid out as envtest's: `controller-tools/envtest/{etcd,kube-apiserver,kubectl}`.
fn archive() -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (name, body) in [
        ("etcd", "#!/bin/sh\necho etcd\n"),
        ("kube-apiserver", "#!/bin/sh\necho kube-apiserver\n"),
        ("kubectl", "#!/bin/sh\necho kubectl\n"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o555);
        header.set_cksum();
        tar.append_data(
            &mut header,
            format!("controller-tools/envtest/{name}"),
            body.as_bytes(),
        )
        .unwrap();
    }
    let tar = tar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

fn sha512(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA512, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Serves the files `files_for` gives for the server's own base URL (path to body; a body
/// starting with `->` is a 302 to the rest) on a loopback port; returns the base URL.
async fn serve(files_for: impl FnOnce(&str) -> HashMap<String, Vec<u8>>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let files = Arc::new(files_for(&base));
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(answer(socket, files.clone()));
        }
    });
    base
}

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn kube_codegen(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(args)
        .output()
        .unwrap();
    Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Everything under `dir`, relative.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_and_list_against_a_loopback_index() {
    let good = archive();
    let truncated = good[..good.len() / 2].to_vec();
    let entry = |name: &str, body: &[u8], path: &str| {
        format!(
            "    {name}:\n      hash: {}\n      selfLink: BASE{path}\n",
            sha512(body)
        )
    };
    let index = format!(
        "releases:\n  v1.36.0:\n{}  v1.36.2:\n{}{}  v1.35.0-alpha.3:\n{}  v1.34.1:\n    envtest-v1.34.1-linux-amd64.tar.gz:\n      hash: {}\n      selfLink: BASE/good.tar.gz\n  v1.33.0:\n{}",
        entry("envtest-v1.36.0-linux-amd64.tar.gz", &good, "/good.tar.gz"),
        entry("envtest-v1.36.2-linux-amd64.tar.gz", &good, "/moved.tar.gz"),
        entry("envtest-v1.36.2-darwin-arm64.tar.gz", &good, "/good.tar.gz"),
        entry(
            "envtest-v1.35.0-alpha.3-linux-amd64.tar.gz",
            &good,
            "/good.tar.gz"
        ),
        sha512(b"something else"),
        entry(
            "envtest-v1.33.0-linux-amd64.tar.gz",
            &truncated,
            "/truncated.tar.gz"
        ),
    );
    let mut files = HashMap::new();
    files.insert("/good.tar.gz".to_owned(), good.clone());
    files.insert("/moved.tar.gz".to_owned(), b"->/good.tar.gz".to_vec());
    files.insert("/truncated.tar.gz".to_owned(), truncated);
    // The index names the server it is served from.
    let base = serve(|base| {
        files.insert(
            "/index.yaml".to_owned(),
            index.replace("BASE", base).into_bytes(),
        );
        files
    })
    .await;
    let index = format!("{base}/index.yaml");
    let root = std::env::temp_dir().join(format!("envtest-fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let store = root.join("store/k8s");
    let store_s = store.to_str().unwrap().to_owned();
    let common = |v: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = v.iter().map(|s| (*s).to_owned()).collect();
        a.extend(
            [
                "--index", &index, "--dir", &store_s, "--os", "linux", "--arch", "amd64",
            ]
            .iter()
            .map(|s| (*s).to_owned()),
        );
        a
    };
    let run = |v: Vec<String>| {
        let refs: Vec<&str> = v.iter().map(String::as_str).collect();
        tokio::task::block_in_place(|| kube_codegen(&refs))
    };

    // A wrong digest: nothing written, not even the store's directories.
    let r = run(common(&["envtest", "fetch", "--version", "1.34"]));
    assert!(!r.ok, "{}", r.stderr);
    assert!(r.stderr.contains("SHA-512 digest is"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was written"), "{}", r.stderr);
    assert!(!root.exists(), "left behind: {:?}", tree(&root));

    // A truncated archive: the digest matches the index, the unpacking fails, nothing stays.
    let r = run(common(&["envtest", "fetch", "--version", "1.33.0"]));
    assert!(!r.ok, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("unpacking envtest-v1.33.0-linux-amd64.tar.gz"),
        "{}",
        r.stderr
    );
    assert!(!root.exists(), "left behind: {:?}", tree(&root));

    // A platform the release has no archive for.
    let mut args = common(&["envtest", "fetch", "--version", "1.36"]);
    let arch = args.iter().position(|a| a == "amd64").unwrap();
    args[arch] = "s390x".to_owned();
    let r = run(args);
    assert!(!r.ok);
    assert!(
        r.stderr.contains(
            "envtest 1.36.2 has no archive for linux-s390x (it has darwin-arm64, linux-amd64)"
        ),
        "{}",
        r.stderr
    );
    assert!(!root.exists());

    // A release the index does not have.
    let r = run(common(&["envtest", "fetch", "--version", "1.37"]));
    assert!(!r.ok);
    assert!(
        r.stderr
            .contains("the index has no release 1.37 (newest: 1.36.2, 1.36.0, 1.34.1, 1.33.0)"),
        "{}",
        r.stderr
    );

    // 1.36 is the newest 1.36 release (pre-releases never), through a redirect.
    let r = run(common(&["envtest", "fetch", "--version", "1.36"]));
    assert!(r.ok, "{}", r.stderr);
    let target = store.join("1.36.2-linux-amd64");
    assert_eq!(
        r.stdout,
        format!("export KUBEBUILDER_ASSETS={}\n", target.display())
    );
    assert!(
        r.stderr.contains("etcd, kube-apiserver, kubectl"),
        "{}",
        r.stderr
    );
    for name in ["etcd", "kube-apiserver", "kubectl"] {
        let file = target.join(name);
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            format!("#!/bin/sh\necho {name}\n")
        );
    }
    assert_eq!(
        tree(&store),
        vec![
            "1.36.2-linux-amd64",
            "1.36.2-linux-amd64/etcd",
            "1.36.2-linux-amd64/kube-apiserver",
            "1.36.2-linux-amd64/kubectl"
        ]
    );

    // Again: already there, same line.
    let r = run(common(&["envtest", "fetch", "--version", "1.36.x"]));
    assert!(r.ok, "{}", r.stderr);
    assert!(r.stderr.contains("already in"), "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!("export KUBEBUILDER_ASSETS={}\n", target.display())
    );

    // A failed --force leaves the installed version as it was.
    let r = run(common(&[
        "envtest",
        "fetch",
        "--version",
        "1.34.1",
        "--force",
    ]));
    assert!(!r.ok);
    assert!(target.join("etcd").is_file());

    let r = run(common(&["envtest", "list"]));
    assert!(r.ok, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        format!(
            "1.36.2\tinstalled\t{}\n1.36.0\tavailable\n1.34.1\tavailable\n1.33.0\tavailable\n",
            target.display()
        )
    );
    std::fs::remove_dir_all(&root).unwrap();
}

async fn answer(mut socket: tokio::net::TcpStream, files: Arc<HashMap<String, Vec<u8>>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match socket.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let answer = match files.get(&path) {
        Some(body) if body.starts_with(b"->") => format!(
            "HTTP/1.1 302 Found\r\nLocation: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            String::from_utf8_lossy(&body[2..])
        )
        .into_bytes(),
        Some(body) => {
            let mut a = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .into_bytes();
            a.extend_from_slice(body);
            a
        }
        None => {
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec()
        }
    };
    let _ = socket.write_all(&answer).await;
}
