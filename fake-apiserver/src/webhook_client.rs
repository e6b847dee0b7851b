//! Calling a webhook as kube-apiserver does: the `clientConfig` of a webhook configuration
//! or of a CRD's conversion (a `url`, or a Service the test maps to a loopback address),
//! HTTPS verified against its `caBundle`, and Go's words for what goes wrong.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

/// Where a webhook is called and how its certificate is checked.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The URL as the real server names it in errors (`https://svc.ns.svc:443/path` for a
    /// Service).
    pub url: String,
    /// `host:port` to dial.
    dial: String,
    /// The name the certificate must carry.
    server_name: String,
    ca: Vec<CertificateDer<'static>>,
}

impl Endpoint {
    /// The endpoint of a `clientConfig`; a Service resolves to the address `services` gives
    /// for it (`Config::webhook_services`), else to its cluster DNS name.
    pub fn of(client: &Value, services: &BTreeMap<String, SocketAddr>) -> Self {
        let ca = client["caBundle"]
            .as_str()
            .and_then(|b| apiserver_rules::base64::base64_decode(b).ok())
            .map(|pem| {
                CertificateDer::pem_slice_iter(&pem)
                    .filter_map(Result::ok)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(url) = client["url"].as_str() {
            let rest = url.strip_prefix("https://").unwrap_or(url);
            let authority = rest.split(['/', '?']).next().unwrap_or("");
            let host = authority
                .rsplit_once(':')
                .filter(|(_, p)| p.parse::<u16>().is_ok())
                .map_or(authority, |(h, _)| h);
            let dial = if authority.contains(':') && !authority.ends_with(']') {
                authority.to_owned()
            } else {
                format!("{authority}:443")
            };
            return Self {
                url: url.to_owned(),
                dial,
                server_name: host.trim_matches(['[', ']']).to_owned(),
                ca,
            };
        }
        let service = &client["service"];
        let (ns, svc) = (
            service["namespace"].as_str().unwrap_or(""),
            service["name"].as_str().unwrap_or(""),
        );
        let port = service["port"].as_u64().unwrap_or(443);
        let path = service["path"].as_str().unwrap_or("");
        let host = format!("{svc}.{ns}.svc");
        let dial = services
            .get(&format!("{ns}/{svc}"))
            .map(ToString::to_string)
            .unwrap_or_else(|| format!("{host}:{port}"));
        Self {
            url: format!("https://{host}:{port}{path}"),
            dial,
            server_name: host,
            ca,
        }
    }

    /// Posts `review` as an admission webhook is called: the response, or why the call
    /// failed in Go's words. `timeout` is only named in the URL (`?timeout=10s`); the caller
    /// bounds the call.
    pub async fn post(&self, timeout: Duration, review: &Value) -> Result<Value, String> {
        let (status, bytes) = self.exchange(timeout, review).await?;
        if !(200..300).contains(&status) {
            return Err(format!("expected response code 200, got {status}"));
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| format!("received invalid webhook response: {e}"))
    }

    /// Posts `review`: the HTTP status and body, or why there are none.
    pub async fn exchange(
        &self,
        timeout: Duration,
        review: &Value,
    ) -> Result<(u16, Bytes), String> {
        let mut roots = rustls::RootCertStore::empty();
        for ca in &self.ca {
            let _ = roots.add(ca.clone());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(&self.dial)
            .await
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::ConnectionRefused {
                    format!("dial tcp {}: connect: connection refused", self.dial)
                } else {
                    format!("dial tcp {}: {e}", self.dial)
                }
            })?;
        let name = ServerName::try_from(self.server_name.clone()).map_err(|e| e.to_string())?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| {
                if e.to_string().contains("UnknownIssuer") {
                    "tls: failed to verify certificate: x509: certificate signed by unknown authority"
                        .to_owned()
                } else {
                    format!("tls: failed to verify certificate: {e}")
                }
            })?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        let uri = format!("{}?timeout={}s", self.url, timeout.as_secs());
        let body = serde_json::to_vec(review).unwrap_or_default();
        let request = http::Request::post(&uri)
            .header(http::header::HOST, self.server_name.as_str())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, bytes))
    }
}
