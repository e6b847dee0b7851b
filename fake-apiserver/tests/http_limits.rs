//! The fake's HTTP server against hostile and broken clients: a deep body, a slow head
//! (slowloris), an idle connection, a body shorter than its Content-Length, a flood of
//! connections beyond the limit, and a shutdown with slow clients open.
//!
//! Each test runs the server on a multi-threaded runtime (the binary's), and asserts that
//! a connection is closed, with generous margins, never how long it took: a busy 2-core
//! machine may be slow, but never slow by seconds.

use std::net::SocketAddr;
use std::time::Duration;

use fake_apiserver::{Config, FakeApiServer, HttpLimits, Matcher, Served};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Well past any deadline a test sets, for what must happen.
const MARGIN: Duration = Duration::from_secs(10);

/// A short limit for the stage under test.
const SHORT: Duration = Duration::from_millis(500);

async fn serve(limits: HttpLimits) -> (FakeApiServer, Served) {
    let server = FakeApiServer::with_config(Config {
        http: limits,
        ..Config::default()
    });
    let served = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    (server, served)
}

/// A request's bytes, with a `Content-Length` for its body.
fn request(method: &str, path: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{method} {path} HTTP/1.1\r\nHost: fake\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// Reads one response: its status and body (by its Content-Length, or chunked up to the
/// end of the head only).
async fn response(stream: &mut TcpStream) -> (u16, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let status = head[9..12].parse().unwrap();
            let length: Option<usize> = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map(|v| v.trim().parse().unwrap());
            let Some(length) = length else {
                return (status, String::new());
            };
            if buf.len() >= end + 4 + length {
                let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
                return (status, body);
            }
        }
        let n = stream.read(&mut chunk).await.expect("a response");
        assert!(
            n > 0,
            "closed before a whole response: {:?}",
            String::from_utf8_lossy(&buf)
        );
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// One request on a new connection.
async fn once(addr: SocketAddr, method: &str, path: &str, ct: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(&request(method, path, ct, body))
        .await
        .unwrap();
    timeout(MARGIN, response(&mut stream))
        .await
        .expect("an answer in time")
}

/// Waits until the server closes `stream` (end of file or reset), reading whatever it sends.
async fn closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return seen,
            Ok(n) => seen.extend_from_slice(&chunk[..n]),
        }
    }
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issue_s_deep_body_is_a_400_and_the_server_keeps_serving() {
    let (_server, served) = serve(HttpLimits::default()).await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, body) = once(
        served.addr,
        "POST",
        CONFIGMAPS,
        "application/json",
        deep.as_bytes(),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("exceeded max depth"), "{body}");
    // Deeper than the fake reads, shallower than Go's limit: refused, nothing crashes.
    for (ct, body) in [
        (
            "application/json",
            format!("{}1{}", "{\"a\":".repeat(3_000), "}".repeat(3_000)),
        ),
        (
            "application/yaml",
            format!("{}{}", "[".repeat(4_500), "]".repeat(4_500)),
        ),
    ] {
        let (status, _) = once(served.addr, "POST", CONFIGMAPS, ct, body.as_bytes()).await;
        assert_eq!(status, 400);
    }
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"after"}}"#;
    let (status, body) = once(
        served.addr,
        "POST",
        CONFIGMAPS,
        "application/json",
        cm.as_bytes(),
    )
    .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_head_and_a_silent_connection_are_closed() {
    let (_server, served) = serve(HttpLimits {
        header_timeout: SHORT,
        ..HttpLimits::default()
    })
    .await;
    // Slowloris: a head that never ends, one byte at a time, each well within any
    // per-read timeout; the head's deadline runs from the first byte.
    let stream = TcpStream::connect(served.addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        let _ = writer
            .write_all(b"GET /api HTTP/1.1\r\nHost: fake\r\n")
            .await;
        while writer.write_all(b"X").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let mut chunk = [0u8; 64];
    let end = timeout(MARGIN, reader.read(&mut chunk)).await;
    assert!(
        matches!(end, Ok(Ok(0) | Err(_))),
        "the slow head is closed: {end:?}"
    );
    trickle.abort();

    // A connection that never sends a byte.
    let mut silent = TcpStream::connect(served.addr).await.unwrap();
    let seen = timeout(MARGIN, closed(&mut silent))
        .await
        .expect("the silent connection is closed");
    assert!(seen.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed() {
    let (_server, served) = serve(HttpLimits {
        idle_timeout: SHORT,
        ..HttpLimits::default()
    })
    .await;
    let mut stream = TcpStream::connect(served.addr).await.unwrap();
    for _ in 0..2 {
        // Requests within the idle timeout keep the connection.
        stream
            .write_all(&request("GET", CONFIGMAPS, "application/json", b""))
            .await
            .unwrap();
        let (status, _) = timeout(MARGIN, response(&mut stream)).await.unwrap();
        assert_eq!(status, 200);
    }
    let seen = timeout(MARGIN, closed(&mut stream))
        .await
        .expect("the idle connection is closed");
    assert!(seen.is_empty(), "{:?}", String::from_utf8_lossy(&seen));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_shorter_than_its_length_is_a_408_and_closed() {
    let (server, served) = serve(HttpLimits {
        body_timeout: SHORT,
        ..HttpLimits::default()
    })
    .await;
    let mut stream = TcpStream::connect(served.addr).await.unwrap();
    let head = format!(
        "POST {CONFIGMAPS} HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"apiVersion\":"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let seen = timeout(MARGIN, closed(&mut stream))
        .await
        .expect("the short body is closed");
    let seen = String::from_utf8_lossy(&seen);
    assert!(seen.starts_with("HTTP/1.1 408"), "{seen}");
    assert!(seen.contains("did not arrive within"), "{seen}");
    assert!(server.actions().is_empty(), "nothing was handled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_beyond_the_limit_is_refused_and_open_connections_are_answered() {
    const LIMIT: usize = 4;
    let (_server, served) = serve(HttpLimits {
        max_connections: LIMIT,
        ..HttpLimits::default()
    })
    .await;
    let mut kept = TcpStream::connect(served.addr).await.unwrap();
    kept.write_all(&request("GET", CONFIGMAPS, "application/json", b""))
        .await
        .unwrap();
    assert_eq!(timeout(MARGIN, response(&mut kept)).await.unwrap().0, 200);

    let mut flood = Vec::new();
    for _ in 0..20 {
        flood.push(TcpStream::connect(served.addr).await.unwrap());
    }
    // Those over the limit are closed at once; the rest wait for their head.
    let mut refused = 0;
    for stream in &mut flood {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) = timeout(Duration::from_secs(2), stream.read(&mut byte)).await {
            refused += 1;
        }
    }
    assert_eq!(
        refused,
        20 - (LIMIT - 1),
        "all but the free slots are refused"
    );
    // The connection opened before the flood is still answered, again and again.
    for _ in 0..3 {
        kept.write_all(&request("GET", CONFIGMAPS, "application/json", b""))
            .await
            .unwrap();
        assert_eq!(timeout(MARGIN, response(&mut kept)).await.unwrap().0, 200);
    }
    // Once the flood is gone, new connections are served again.
    drop(flood);
    let again = async {
        loop {
            let mut stream = TcpStream::connect(served.addr).await.unwrap();
            stream
                .write_all(&request("GET", "/version", "application/json", b""))
                .await
                .unwrap();
            let mut chunk = [0u8; 12];
            if stream.read_exact(&mut chunk).await.is_ok() {
                return chunk;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let chunk = timeout(MARGIN, again).await.expect("a slot frees up");
    assert_eq!(&chunk, b"HTTP/1.1 200");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_slow_clients_at_once_and_lets_a_request_being_answered_finish() {
    let (server, served) = serve(HttpLimits::default()).await;
    let addr = served.addr;
    // A request being answered: held by a programmed delay.
    server.delay(
        Matcher::new("list", "configmaps"),
        Duration::from_millis(500),
        None,
    );
    let mut answering = TcpStream::connect(addr).await.unwrap();
    answering
        .write_all(&request("GET", CONFIGMAPS, "application/json", b""))
        .await
        .unwrap();
    let answered = tokio::spawn(async move { timeout(MARGIN, response(&mut answering)).await });
    // A partial head, a partial body, an idle connection and a watch.
    let mut head = TcpStream::connect(addr).await.unwrap();
    head.write_all(b"GET /api HTTP/1.1\r\nHost: fa")
        .await
        .unwrap();
    let mut body = TcpStream::connect(addr).await.unwrap();
    body.write_all(
        format!("POST {CONFIGMAPS} HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{").as_bytes(),
    )
    .await
    .unwrap();
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(&request("GET", "/version", "application/json", b""))
        .await
        .unwrap();
    assert_eq!(timeout(MARGIN, response(&mut idle)).await.unwrap().0, 200);
    let mut watch = TcpStream::connect(addr).await.unwrap();
    watch
        .write_all(&request(
            "GET",
            &format!("{CONFIGMAPS}?watch=1"),
            "application/json",
            b"",
        ))
        .await
        .unwrap();
    assert_eq!(timeout(MARGIN, response(&mut watch)).await.unwrap().0, 200);
    // The delayed request has been read (it is in the action log) before the stop.
    let read = async {
        while !server.actions().iter().any(|a| a.verb == "list") {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    timeout(MARGIN, read).await.unwrap();

    timeout(Duration::from_secs(2), served.stop())
        .await
        .expect("the server stops within 2 s with slow clients open");
    for (what, stream) in [
        ("head", &mut head),
        ("body", &mut body),
        ("idle", &mut idle),
        ("watch", &mut watch),
    ] {
        timeout(MARGIN, closed(stream))
            .await
            .unwrap_or_else(|_| panic!("the {what} connection is closed"));
    }
    let (status, _) = answered
        .await
        .unwrap()
        .expect("the request being answered got its answer");
    assert_eq!(status, 200);
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

/// The process's soft limit of open files (Linux), when it can be read.
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_watches_are_held_and_a_get_is_still_answered() {
    const WATCHES: usize = 2_000;
    // Both ends of every connection are in this process.
    if open_file_limit().is_some_and(|n| n < 2 * WATCHES as u64 + 256) {
        eprintln!("skipped: `ulimit -n` is below {}", 2 * WATCHES + 256);
        return;
    }
    let (_server, served) = serve(HttpLimits::default()).await;
    let watch = format!("{CONFIGMAPS}?watch=true&timeoutSeconds=60");
    let mut watches = Vec::with_capacity(WATCHES);
    for _ in 0..WATCHES {
        let mut stream = TcpStream::connect(served.addr).await.unwrap();
        stream
            .write_all(&request("GET", &watch, "application/json", b""))
            .await
            .unwrap();
        watches.push(stream);
    }
    // Every watch is answered: its head arrives.
    for stream in &mut watches {
        let mut head = [0u8; 12];
        timeout(MARGIN, stream.read_exact(&mut head))
            .await
            .expect("a watch answered in time")
            .expect("a watch head");
        assert_eq!(&head, b"HTTP/1.1 200");
    }
    let (code, _) = once(served.addr, "GET", CONFIGMAPS, "application/json", b"").await;
    assert_eq!(code, 200);
    drop(watches);
    served.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_hundreds_of_headers_is_answered() {
    let (_server, served) = serve(HttpLimits::default()).await;
    let mut head = format!("GET {CONFIGMAPS} HTTP/1.1\r\nHost: fake\r\n");
    for i in 0..300 {
        head.push_str(&format!("X-Extra-{i}: {i}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(served.addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let (code, _) = timeout(MARGIN, response(&mut stream)).await.unwrap();
    assert_eq!(code, 200);
}
