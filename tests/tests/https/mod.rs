//! A client for the webhook servers under test: TLS that trusts one CA only, and one
//! HTTP/1.1 request per connection.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// Connects to `addr` as `127.0.0.1`, trusting only the certificates in `ca_pem`: the
/// certificate the server presented, and the stream; or why the handshake failed.
pub async fn connect(
    addr: SocketAddr,
    ca_pem: &[u8],
) -> Result<(CertificateDer<'static>, TlsStream<TcpStream>), String> {
    let mut roots = rustls::RootCertStore::empty();
    for ca in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(ca.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let served = tls.get_ref().1.peer_certificates().unwrap()[0]
        .clone()
        .into_owned();
    Ok((served, tls))
}

/// One request with a JSON body: the status code (0 when there is none) and the body.
pub async fn call(
    addr: SocketAddr,
    ca_pem: &[u8],
    method: &str,
    path: &str,
    body: &[u8],
) -> (u16, Vec<u8>) {
    call_as(addr, ca_pem, method, path, Some("application/json"), body).await
}

/// [`call`] with another `Content-Type`, or none.
pub async fn call_as(
    addr: SocketAddr,
    ca_pem: &[u8],
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> (u16, Vec<u8>) {
    let (_, mut tls) = connect(addr, ca_pem).await.unwrap();
    let content_type = content_type
        .map(|c| format!("content-type: {c}\r\n"))
        .unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n{content_type}content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes()).await.unwrap();
    tls.write_all(body).await.unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw).await;
    let text = String::from_utf8_lossy(&raw);
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(raw.len(), |i| i + 4);
    (code, raw[split..].to_vec())
}

/// One request on a connection kept alive: the status code and body of its answer, read by
/// its `Content-Length`; `None` when the connection closed first.
#[allow(dead_code)] // The webhook tests' keep-alive cases; the conversion tests do not keep alive.
pub async fn exchange(
    tls: &mut TlsStream<TcpStream>,
    path: &str,
    body: &[u8],
) -> Option<(u16, Vec<u8>)> {
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    tls.write_all(head.as_bytes()).await.ok()?;
    tls.write_all(body).await.ok()?;
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if tls.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let code = head.split(' ').nth(1)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse().ok())?;
    let mut body = vec![0u8; length];
    tls.read_exact(&mut body).await.ok()?;
    Some((code, body))
}

/// Whether the server closed the connection: a read that ends (end of stream or an error)
/// within `within`, rather than one still waiting for data.
#[allow(dead_code)] // The webhook tests' timeout cases.
pub async fn closed<S: tokio::io::AsyncRead + Unpin>(
    stream: &mut S,
    within: std::time::Duration,
) -> bool {
    let mut sink = [0u8; 4096];
    let read = async {
        loop {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                // A refusal the server wrote before it closed.
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(within, read).await.is_ok()
}
