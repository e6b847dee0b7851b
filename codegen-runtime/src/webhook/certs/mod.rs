//! Self-managed serving certificates: the operator makes and rotates its own webhook
//! certificate, with no cert-manager (the request kube-rs#776).
//!
//! [`SelfSignedCerts`] keeps, in one Secret of the operator's namespace (type
//! `kubernetes.io/tls`, with `ca.crt` and `ca.key` beside `tls.crt` and `tls.key`), a
//! self-signed CA and a serving certificate for the webhook Service's DNS names; writes the
//! CA bundle into the operator's webhook configurations and into the conversion of its
//! CRDs that convert through a webhook; and serves the Secret's certificate
//! ([`ServedCert`], what [`WebhookServer::serve_with`](super::WebhookServer::serve_with)
//! takes), reloaded at the next handshake when the Secret changes.
//!
//! - **One writer.** Only the replica that leads ([`SelfSignedCerts::leader`]) creates,
//!   rotates and injects; every replica watches the Secret and serves what it holds. Each
//!   write carries the `resourceVersion` read (a create fails if the Secret exists), so
//!   two writers never overwrite each other: the one that loses reads the Secret again and
//!   adopts it.
//! - **Rotation.** A certificate is renewed once a third of its lifetime remains. A new
//!   CA first joins the bundle beside the old one (`ca.crt` holds both, and so does every
//!   `caBundle`); the serving certificate is signed by the new CA only after the bundle has
//!   been in place for a while (`check_every`, at most 30 seconds), so callers trust the
//!   old certificate and the new one throughout. Expired CAs leave the bundle.
//!
//! ```no_run
//! # use kube_codegen_runtime::webhook::WebhookServer;
//! use kube_codegen_runtime::webhook::certs::{CertConfig, SelfSignedCerts};
//!
//! # async fn run(client: kube::Client, server: WebhookServer, leading: tokio::sync::watch::Receiver<bool>) -> Result<(), Box<dyn std::error::Error>> {
//! let mut config = CertConfig::new("my-operator-webhook-cert", "my-operator-system", "my-operator-webhook");
//! config.webhook_configurations = vec!["my-operator".into()];
//! config.crds = vec!["widgets.example.com".into()];
//! // Only the replica holding the lease writes; every replica serves the Secret's certificate.
//! let certs = SelfSignedCerts::new(client, config)?.leader(leading);
//! let keeper = tokio::spawn(certs.clone().run(std::future::pending()));
//! certs.ready(std::time::Duration::from_secs(30)).await?;
//! let listener = tokio::net::TcpListener::bind("0.0.0.0:9443").await?;
//! server.serve_with(listener, certs.served(), std::future::pending()).await?;
//! keeper.abort();
//! # Ok(()) }
//! ```

mod inject;
mod issue;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::sync::watch;

use issue::Cert;

/// Where the certificate is kept and where its CA goes. [`CertConfig::new`] fills in the
/// defaults; the fields are public to change them.
#[derive(Debug, Clone)]
pub struct CertConfig {
    /// The Secret holding the CA and the serving certificate.
    pub secret: String,
    /// The operator's namespace: the Secret's, and the webhook Service's.
    pub namespace: String,
    /// The webhook Service: the certificate names `<service>.<namespace>.svc` and
    /// `<service>.<namespace>.svc.cluster.local` (and the shorter forms). Empty: none.
    pub service: String,
    /// More names for the certificate: DNS names or IP addresses (in development mode, the
    /// loopback address the API server calls).
    pub hosts: Vec<String>,
    /// The names of the operator's MutatingWebhookConfigurations and
    /// ValidatingWebhookConfigurations (a name is looked up as both kinds).
    pub webhook_configurations: Vec<String>,
    /// A label selector naming more of the operator's webhook configurations.
    pub webhook_selector: Option<String>,
    /// The CRDs (`<plural>.<group>`) whose conversion webhook gets the CA. A CRD that
    /// does not convert through a webhook is left alone.
    pub crds: Vec<String>,
    /// The serving certificate's lifetime (default 90 days; renewed with 30 left).
    pub validity: Duration,
    /// The CA's lifetime (default 10 years).
    pub ca_validity: Duration,
    /// How often the Secret and the CA bundles are checked besides the Secret's watch
    /// events (default one minute).
    pub check_every: Duration,
    /// The field manager of every write.
    pub field_manager: String,
}

impl CertConfig {
    /// The Secret `secret` in `namespace`, for the Service `service`, with the default
    /// lifetimes and no webhook configuration or CRD yet.
    pub fn new(
        secret: impl Into<String>,
        namespace: impl Into<String>,
        service: impl Into<String>,
    ) -> Self {
        let secret = secret.into();
        Self {
            field_manager: secret.clone(),
            secret,
            namespace: namespace.into(),
            service: service.into(),
            hosts: Vec::new(),
            webhook_configurations: Vec::new(),
            webhook_selector: None,
            crds: Vec::new(),
            validity: Duration::from_secs(90 * 24 * 3600),
            ca_validity: Duration::from_secs(10 * 365 * 24 * 3600),
            check_every: Duration::from_secs(60),
        }
    }

    /// The names the serving certificate is for: the Service's, then [`CertConfig::hosts`].
    pub fn dns_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if !self.service.is_empty() {
            let (svc, ns) = (&self.service, &self.namespace);
            names.extend([
                format!("{svc}.{ns}.svc"),
                format!("{svc}.{ns}.svc.cluster.local"),
                format!("{svc}.{ns}"),
                svc.clone(),
            ]);
        }
        for host in &self.hosts {
            if !names.contains(host) {
                names.push(host.clone());
            }
        }
        names
    }

    fn check(&self) -> Result<(), CertError> {
        let bad = |m: &str| Err(CertError::Config(m.to_owned()));
        if self.secret.is_empty() || self.namespace.is_empty() {
            return bad("the Secret's name and namespace must be set");
        }
        if self.dns_names().is_empty() {
            return bad("no name for the certificate: set `service` or `hosts`");
        }
        if self.validity < Duration::from_secs(3) || self.ca_validity < self.validity {
            return bad(
                "`validity` must be at least 3 seconds, and `ca_validity` at least `validity`",
            );
        }
        if self.check_every.is_zero() {
            return bad("`check_every` must be more than zero");
        }
        Ok(())
    }
}

/// Why the certificate could not be made, stored or injected.
#[derive(Debug)]
pub enum CertError {
    /// The [`CertConfig`] cannot work (a message says which field).
    Config(String),
    /// A request to the API server failed (RBAC included: the operator needs `get`,
    /// `list`, `watch`, `create` and `update` of Secrets in its namespace, and `get`,
    /// `list` and `patch` of its webhook configurations and CRDs).
    Kube(kube::Error),
    /// rcgen could not make a certificate.
    Certificate(String),
    /// No certificate was served within the time [`SelfSignedCerts::ready`] waited; the
    /// last error, if any.
    NotReady(String),
}

impl std::fmt::Display for CertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Config(m) => write!(f, "self-managed webhook certificate: {m}"),
            Self::Kube(e) => write!(f, "self-managed webhook certificate: {e}"),
            Self::Certificate(m) => write!(f, "self-managed webhook certificate: {m}"),
            Self::NotReady(m) => write!(f, "no webhook certificate to serve yet: {m}"),
        }
    }
}

impl std::error::Error for CertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Kube(e) => Some(e),
            _ => None,
        }
    }
}

impl From<kube::Error> for CertError {
    fn from(e: kube::Error) -> Self {
        Self::Kube(e)
    }
}

/// What the server presents: the certificate of the Secret as last read, swapped at once
/// when the Secret changes (the next handshake presents the new one).
#[derive(Debug)]
pub struct ServedCert {
    current: watch::Sender<Option<Loaded>>,
}

/// A certificate loaded from the Secret.
#[derive(Debug, Clone)]
struct Loaded {
    tls_crt: Vec<u8>,
    ca_crt: String,
    key: Arc<CertifiedKey>,
}

impl ServedCert {
    /// The CA bundle (PEM) of the Secret the served certificate came from: what callers
    /// trust. `None` before the Secret was read.
    pub fn ca_bundle(&self) -> Option<String> {
        self.current.borrow().as_ref().map(|l| l.ca_crt.clone())
    }

    /// `tls.crt` as served (PEM).
    pub fn certificate(&self) -> Option<String> {
        let current = self.current.borrow();
        current
            .as_ref()
            .map(|l| String::from_utf8_lossy(&l.tls_crt).into_owned())
    }

    fn load(&self, secret: &Secret) -> Result<bool, String> {
        let data = secret.data.as_ref().ok_or("the Secret has no data")?;
        let field = |k: &str| data.get(k).map(|b| b.0.clone()).ok_or(format!("no `{k}`"));
        let (crt, key, ca) = (field("tls.crt")?, field("tls.key")?, field("ca.crt")?);
        let ca = String::from_utf8(ca).map_err(|_| "`ca.crt` is not text".to_owned())?;
        let same = self
            .current
            .borrow()
            .as_ref()
            .is_some_and(|l| l.tls_crt == crt && l.ca_crt == ca);
        if same {
            return Ok(false);
        }
        let certified = super::tls::certified_key_from_pem(&crt, &key)?;
        self.current.send_replace(Some(Loaded {
            tls_crt: crt,
            ca_crt: ca,
            key: certified,
        }));
        Ok(true)
    }
}

impl ResolvesServerCert for ServedCert {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.borrow().as_ref().map(|l| Arc::clone(&l.key))
    }
}

/// The operator's own webhook certificate, kept in a Secret and rotated before it expires.
/// Clones share the certificate served. See the [module docs](self).
#[derive(Clone)]
pub struct SelfSignedCerts {
    client: kube::Client,
    config: Arc<CertConfig>,
    served: Arc<ServedCert>,
    leader: Option<watch::Receiver<bool>>,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for SelfSignedCerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSignedCerts")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What a writer remembers between passes.
#[derive(Debug, Default)]
struct State {
    /// The CA bundle last seen in every target, and since when.
    published: Option<(String, Instant)>,
    /// The last error of a pass.
    last_error: Option<String>,
}

/// What one [`SelfSignedCerts::sync`] pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synced {
    /// Why the Secret was written (`"created"`, `"CA rotated"`, `"certificate renewed"`,
    /// `"replaced unreadable contents"`), if it was.
    pub written: Option<&'static str>,
    /// The write lost to another writer (the Secret changed since it was read): nothing
    /// was written, and the next pass adopts what the other wrote.
    pub conflict: bool,
    /// `kind/name` of each webhook configuration or CRD whose caBundle was written.
    pub patched: Vec<String>,
    /// Whether the served certificate changed.
    pub reloaded: bool,
    /// When the next certificate is due, in seconds since the epoch (a writer's pass).
    pub next_due: Option<i64>,
}

/// The Secret's contents, read.
#[derive(Debug, Clone)]
struct Stored {
    /// `ca.crt`: the signing CA first.
    cas: Vec<Cert>,
    ca_key: String,
    cert: Cert,
    tls_key: String,
}

impl Stored {
    fn read(secret: &Secret) -> Result<Self, String> {
        let data = secret.data.as_ref().ok_or("no data")?;
        let text = |k: &str| {
            let bytes = data.get(k).ok_or(format!("no `{k}`"))?;
            String::from_utf8(bytes.0.clone()).map_err(|_| format!("`{k}` is not text"))
        };
        let cas = issue::parse(text("ca.crt")?.as_bytes()).map_err(|e| format!("ca.crt: {e}"))?;
        let cert = issue::parse(text("tls.crt")?.as_bytes())
            .map_err(|e| format!("tls.crt: {e}"))?
            .remove(0);
        let (ca_key, tls_key) = (text("ca.key")?, text("tls.key")?);
        // The CA key must be the first CA's: it signs the next certificates.
        let signer = rcgen::KeyPair::from_pem(&ca_key).map_err(|e| format!("ca.key: {e}"))?;
        use rcgen::PublicKeyData;
        if signer.subject_public_key_info() != cas[0].public_key {
            return Err("ca.key is not the key of the first CA of ca.crt".to_owned());
        }
        Ok(Self {
            cas,
            ca_key,
            cert,
            tls_key,
        })
    }

    fn bundle(&self) -> String {
        self.cas.iter().map(|c| c.pem.as_str()).collect()
    }

    fn next_due(&self) -> i64 {
        self.cert.renew_at().min(self.cas[0].renew_at())
    }
}

impl SelfSignedCerts {
    /// The manager of `config`'s certificate, writing through `client`; it writes as the
    /// only writer unless [`SelfSignedCerts::leader`] says otherwise. Errors when the
    /// configuration cannot work.
    pub fn new(client: kube::Client, config: CertConfig) -> Result<Self, CertError> {
        config.check()?;
        Ok(Self {
            client,
            config: Arc::new(config),
            served: Arc::new(ServedCert {
                current: watch::Sender::new(None),
            }),
            leader: None,
            state: Arc::default(),
        })
    }

    /// Writes only while `leading` is true (`Elector::leading`, `Manager::leading`); followers serve
    /// what the Secret holds.
    pub fn leader(mut self, leading: watch::Receiver<bool>) -> Self {
        self.leader = Some(leading);
        self
    }

    /// The certificate to serve: give it to
    /// [`WebhookServer::serve_with`](super::WebhookServer::serve_with).
    pub fn served(&self) -> Arc<ServedCert> {
        Arc::clone(&self.served)
    }

    /// The configuration.
    pub fn config(&self) -> &CertConfig {
        &self.config
    }

    fn leading(&self) -> bool {
        self.leader.as_ref().is_none_or(|l| *l.borrow())
    }

    fn secrets(&self) -> Api<Secret> {
        Api::namespaced(self.client.clone(), &self.config.namespace)
    }

    /// Waits until a certificate is served, at most `timeout`; the error says what the
    /// last pass ran into.
    pub async fn ready(&self, timeout: Duration) -> Result<(), CertError> {
        let mut current = self.served.current.subscribe();
        let waited = tokio::time::timeout(timeout, current.wait_for(Option::is_some)).await;
        if matches!(waited, Ok(Ok(_))) {
            return Ok(());
        }
        let last = self.lock().last_error.clone();
        Err(CertError::NotReady(last.unwrap_or_else(|| {
            format!(
                "the Secret {}/{} was not written (is a replica leading?)",
                self.config.namespace, self.config.secret
            )
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// One pass: reads the Secret; as the writer, creates it, rotates what is due and
    /// writes the CA bundle into the targets; serves what the Secret holds.
    pub async fn sync(&self) -> Result<Synced, CertError> {
        let result = if self.leading() {
            self.write_pass().await
        } else {
            self.read_pass().await
        };
        self.lock().last_error = result.as_ref().err().map(ToString::to_string);
        result
    }

    async fn read_pass(&self) -> Result<Synced, CertError> {
        let mut synced = Synced::default();
        if let Some(secret) = self.secrets().get_opt(&self.config.secret).await? {
            synced.reloaded = self.served.load(&secret).map_err(|e| self.unreadable(&e))?;
        }
        Ok(synced)
    }

    fn unreadable(&self, e: &str) -> CertError {
        let (ns, name) = (&self.config.namespace, &self.config.secret);
        CertError::Certificate(format!(
            "the Secret {ns}/{name} does not hold a certificate: {e}"
        ))
    }

    async fn write_pass(&self) -> Result<Synced, CertError> {
        let live = self.secrets().get_opt(&self.config.secret).await?;
        let stored = match live.as_ref().map(Stored::read) {
            Some(Ok(stored)) => stored,
            None => return self.write(live.as_ref(), self.fresh()?, "created").await,
            Some(Err(e)) => {
                tracing::warn!(error = %e, secret = %self.config.secret, "replacing the unreadable webhook certificate Secret");
                let why = "replaced unreadable contents";
                return self.write(live.as_ref(), self.fresh()?, why).await;
            }
        };
        let mut synced = Synced::default();
        let bundle = stored.bundle();
        synced.patched = self.inject(&bundle).await?;
        let (next, why) = self.rotated(&stored, &bundle)?;
        if let Some(next) = next {
            return self.write(live.as_ref(), next, why).await.map(|mut s| {
                s.patched.splice(0..0, synced.patched);
                s
            });
        }
        if let Some(secret) = &live {
            synced.reloaded = self.served.load(secret).map_err(|e| self.unreadable(&e))?;
        }
        synced.next_due = Some(stored.next_due());
        Ok(synced)
    }

    /// Writes `bundle` into the targets; notes since when every target holds it.
    async fn inject(&self, bundle: &str) -> Result<Vec<String>, CertError> {
        let encoded = apiserver_rules::base64::base64_encode(bundle.as_bytes());
        let injected = inject::inject(&self.client, &self.config, &encoded).await?;
        let mut state = self.lock();
        if state.published.as_ref().is_none_or(|(b, _)| b != bundle) {
            state.published = Some((bundle.to_owned(), Instant::now()));
        }
        Ok(injected.patched)
    }

    /// Whether the CA bundle `bundle` has been in every target for a while.
    fn settled(&self, bundle: &str) -> bool {
        let settle = self.config.check_every.min(Duration::from_secs(30));
        self.lock()
            .published
            .as_ref()
            .is_some_and(|(b, since)| b == bundle && since.elapsed() >= settle)
    }

    /// The next contents of the Secret, when something is due, and why.
    fn rotated(
        &self,
        stored: &Stored,
        bundle: &str,
    ) -> Result<(Option<Stored>, &'static str), CertError> {
        let now = issue::unix_now();
        let mut next = stored.clone();
        let mut why = None;
        // Expired CAs leave the bundle (the signing one stays until replaced).
        let signing = next.cas.remove(0);
        next.cas.retain(|ca| ca.not_after > now);
        next.cas.insert(0, signing);
        if next.cas.len() != stored.cas.len() {
            why = Some("expired CA removed");
        }
        if next.cas[0].due(now) {
            let (pem, key) = issue::new_ca(&self.config.secret, self.config.ca_validity)?;
            let ca = issue::parse(pem.as_bytes())
                .map_err(CertError::Certificate)?
                .remove(0);
            next.cas.insert(0, ca);
            next.ca_key = key;
            // The serving certificate moves to the new CA once callers trust it.
            return Ok((Some(next), "CA rotated"));
        }
        let cert = &stored.cert;
        let signing = &next.cas[0];
        let wanted: BTreeSet<String> = self.config.dns_names().into_iter().collect();
        let trusted = next.cas.iter().any(|ca| ca.subject == cert.issuer);
        let renew = if cert.not_after <= now || !trusted || cert.names != wanted {
            // Not served usefully as it is: at once.
            true
        } else if cert.issuer != signing.subject {
            self.settled(bundle)
        } else {
            cert.due(now)
        };
        if renew {
            let (crt, key) = issue::new_serving(
                &self.config.dns_names(),
                &signing.pem,
                &next.ca_key,
                signing.not_after,
                self.config.validity,
            )?;
            next.cert = issue::parse(crt.as_bytes())
                .map_err(CertError::Certificate)?
                .remove(0);
            next.tls_key = key;
            why = Some("certificate renewed");
        }
        Ok((why.is_some().then_some(next), why.unwrap_or_default()))
    }

    /// A new CA and serving certificate.
    fn fresh(&self) -> Result<Stored, CertError> {
        let (ca_pem, ca_key) = issue::new_ca(&self.config.secret, self.config.ca_validity)?;
        let ca = issue::parse(ca_pem.as_bytes())
            .map_err(CertError::Certificate)?
            .remove(0);
        let (crt, tls_key) = issue::new_serving(
            &self.config.dns_names(),
            &ca.pem,
            &ca_key,
            ca.not_after,
            self.config.validity,
        )?;
        let cert = issue::parse(crt.as_bytes())
            .map_err(CertError::Certificate)?
            .remove(0);
        Ok(Stored {
            cas: vec![ca],
            ca_key,
            cert,
            tls_key,
        })
    }

    /// Writes `next`: a create when there was no Secret, else a replace of the version
    /// read. A conflict means another writer won: nothing is written, the next pass adopts.
    async fn write(
        &self,
        live: Option<&Secret>,
        next: Stored,
        why: &'static str,
    ) -> Result<Synced, CertError> {
        let config = &self.config;
        let data = BTreeMap::from([
            ("ca.crt".to_owned(), ByteString(next.bundle().into_bytes())),
            (
                "ca.key".to_owned(),
                ByteString(next.ca_key.clone().into_bytes()),
            ),
            (
                "tls.crt".to_owned(),
                ByteString(next.cert.pem.clone().into_bytes()),
            ),
            (
                "tls.key".to_owned(),
                ByteString(next.tls_key.clone().into_bytes()),
            ),
        ]);
        let mut secret = live.cloned().unwrap_or_else(|| Secret {
            metadata: ObjectMeta {
                name: Some(config.secret.clone()),
                namespace: Some(config.namespace.clone()),
                ..ObjectMeta::default()
            },
            ..Secret::default()
        });
        secret.metadata.labels.get_or_insert_default().insert(
            "app.kubernetes.io/managed-by".to_owned(),
            config.field_manager.clone(),
        );
        secret.type_ = Some("kubernetes.io/tls".to_owned());
        secret.data = Some(data);
        secret.string_data = None;
        let params = PostParams {
            field_manager: Some(config.field_manager.clone()),
            ..PostParams::default()
        };
        let api = self.secrets();
        if let Some(old) = live.and_then(|l| l.type_.as_deref())
            && old != "kubernetes.io/tls"
        {
            // The type of a Secret cannot change, and a Secret of another type is not this
            // manager's to delete.
            return Err(CertError::Config(format!(
                "the Secret {}/{} exists with type `{old}`, not `kubernetes.io/tls`: delete it or name another Secret",
                config.namespace, config.secret
            )));
        }
        let written = match live {
            None => api.create(&params, &secret).await,
            // `metadata.resourceVersion` is the one read: a 409 if it changed since.
            Some(_) => api.replace(&config.secret, &params, &secret).await,
        };
        let secret = match written {
            Ok(secret) => secret,
            Err(kube::Error::Api(status)) if status.code == 409 => {
                tracing::info!(secret = %config.secret, "another writer changed the webhook certificate Secret first; adopting it");
                return Ok(Synced {
                    conflict: true,
                    ..Synced::default()
                });
            }
            Err(e) => return Err(e.into()),
        };
        tracing::info!(secret = %config.secret, why, not_after = next.cert.not_after, "wrote the webhook certificate Secret");
        let mut synced = Synced {
            written: Some(why),
            patched: self.inject(&next.bundle()).await?,
            next_due: Some(next.next_due()),
            ..Synced::default()
        };
        synced.reloaded = self.served.load(&secret).map_err(|e| self.unreadable(&e))?;
        Ok(synced)
    }

    /// Keeps the certificate fresh until `shutdown`: a [`SelfSignedCerts::sync`] pass at
    /// each change of the Secret (a watch), of leadership, when a certificate falls due,
    /// and every `check_every`. Failed passes are logged and retried (from one second,
    /// doubling up to `check_every`).
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>) {
        let fields = format!("metadata.name={}", self.config.secret);
        let mut events = watcher(self.secrets(), watcher::Config::default().fields(&fields))
            .default_backoff()
            .boxed();
        let mut leader = self.leader.clone();
        let mut shutdown = std::pin::pin!(shutdown);
        let mut retry = Duration::from_secs(1);
        loop {
            let wait = match self.sync().await {
                Ok(synced) if synced.conflict => Duration::ZERO,
                Ok(synced) => {
                    retry = Duration::from_secs(1);
                    let due = synced.next_due.map_or(self.config.check_every, |at| {
                        let secs = (at - issue::unix_now()).max(0);
                        Duration::from_secs(u64::try_from(secs).unwrap_or(0))
                            + Duration::from_millis(100)
                    });
                    due.min(self.config.check_every)
                }
                Err(err) => {
                    tracing::warn!(%err, retry = ?retry, "self-managed webhook certificate");
                    let wait = retry;
                    retry = (retry * 2).min(self.config.check_every.max(Duration::from_secs(1)));
                    wait
                }
            };
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(wait) => {}
                Some(_) = events.next() => {}
                Ok(()) = async {
                    match leader.as_mut() {
                        Some(l) => l.changed().await,
                        None => std::future::pending().await,
                    }
                } => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificate_names_the_service_and_the_extra_hosts() {
        let mut config = CertConfig::new("s", "ops", "hook");
        config.hosts = vec!["127.0.0.1".into(), "hook.ops.svc".into()];
        assert_eq!(
            config.dns_names(),
            [
                "hook.ops.svc",
                "hook.ops.svc.cluster.local",
                "hook.ops",
                "hook",
                "127.0.0.1"
            ]
        );
        assert_eq!(config.field_manager, "s");
        config.check().unwrap();
        config.validity = Duration::from_secs(1);
        assert!(matches!(config.check(), Err(CertError::Config(_))));
        let none = CertConfig::new("s", "ops", "");
        assert!(none.check().unwrap_err().to_string().contains("no name"));
    }
}
