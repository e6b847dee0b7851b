//! Development mode: serve webhooks from a laptop to a cluster whose API server can reach
//! it (a local kube-apiserver, kind with host networking), with no cert-manager and no
//! Service.
//!
//! [`certificate`] makes a CA and a serving certificate for the serving address and writes
//! them where [`WebhookServer`](super::WebhookServer) reads them; [`install`] writes the
//! webhook configurations (those `kube-codegen webhooks` generated, with Service client
//! configurations) to the cluster with a URL client configuration pointing at the serving
//! address and the CA as `caBundle`, and [`install_conversions`] points the CRDs' conversion
//! there; [`Installed::uninstall`] and [`InstalledConversions::uninstall`] put everything
//! back, so a stopped process does not leave `failurePolicy: Fail` webhooks refusing every
//! write, or a CRD converting through a dead URL.
//!
//! Nothing depends on the process stopping cleanly: each object written carries, in the
//! same write, a record of what it held before and whom the change belongs to (see
//! [`record`]), and [`restore`] puts back what a development run that died (`kill -9`) left.
//! Development mode calls it at start; `kube-codegen dev restore` calls it by hand.

use std::path::{Path, PathBuf};

use kube::api::{PatchParams, PostParams};
use kube::core::DynamicObject;
use serde_json::{Value, json};

pub mod record;

pub use record::{ANNOTATION, restore};
use record::{annotations_with, api, json_patch};

/// Makes a fresh CA and a serving certificate for `hosts` (IP addresses or DNS names),
/// valid until January 1st two years on, writes `tls.crt` and `tls.key` to `dir` (created if needed), and
/// returns the CA certificate as PEM, for `caBundle`.
pub fn certificate(dir: &Path, hosts: &[String]) -> std::io::Result<String> {
    let fail = |e: rcgen::Error| std::io::Error::other(format!("cannot make a certificate: {e}"));
    // Valid from 2000 (clock skew never matters) to January 1st two years on.
    let (not_before, not_after) = (
        rcgen::date_time_ymd(2000, 1, 1),
        rcgen::date_time_ymd(this_year() + 2, 1, 1),
    );
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-codegen development CA");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    ca_params.not_before = not_before;
    ca_params.not_after = not_after;
    let ca_key = rcgen::KeyPair::generate().map_err(fail)?;
    let ca = ca_params.self_signed(&ca_key).map_err(fail)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);

    let mut params = rcgen::CertificateParams::new(hosts.to_vec()).map_err(fail)?;
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-codegen webhook");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = not_before;
    params.not_after = not_after;
    let key = rcgen::KeyPair::generate().map_err(fail)?;
    let cert = params.signed_by(&key, &issuer).map_err(fail)?;

    std::fs::create_dir_all(dir)?;
    // The key first: the server reloads when either file changes, and a certificate without
    // its key would be refused until the key arrives.
    write_private(&dir.join("tls.key"), key.serialize_pem().as_bytes())?;
    write_private(&dir.join("tls.crt"), cert.pem().as_bytes())?;
    Ok(ca.pem())
}

/// This year, by the system clock.
fn this_year() -> i32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    1970 + i32::try_from(secs / 31_556_952).unwrap_or(0)
}

/// Writes `bytes` to `path` without following what is there: into a new file beside it
/// (created, never opened if it exists, owner-only on Unix), then renamed over `path`, so a
/// symbolic link planted at `path` is replaced, not written through.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = dir.join(format!(".{name}.{}", random_hex()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}

/// 128 random bits as hex, from the operating system (the clock where there is none).
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if random.is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A directory of this process's own for development certificates: created under the
/// system's temporary directory with a random name (`<prefix>-<32 hex digits>`), owner-only
/// on Unix, never one that existed before (so nobody can have planted links in it), and
/// removed with what it holds when dropped.
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    /// Creates one.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created.
    pub fn new(prefix: &str) -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("{prefix}-{}", random_hex()));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)?;
        Ok(Self { path })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Webhook configurations written to a cluster by [`install`].
#[derive(Clone)]
pub struct Installed {
    objects: Vec<(String, String)>,
    field_manager: String,
    client: kube::Client,
}

impl std::fmt::Debug for Installed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installed")
            .field("objects", &self.objects)
            .field("field_manager", &self.field_manager)
            .finish()
    }
}

/// `config` with each webhook's client configuration replaced by `url`
/// `<base_url><path>` (the path of its Service configuration, or of its URL) and `caBundle`.
fn pointed_at(config: &Value, base_url: &str, ca_bundle: &str) -> Value {
    let mut config = config.clone();
    for hook in config["webhooks"].as_array_mut().into_iter().flatten() {
        let client_config = &hook["clientConfig"];
        let path = client_config["service"]["path"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| {
                let url = client_config["url"].as_str()?;
                let rest = url.split_once("://").map_or(url, |(_, r)| r);
                Some(rest.find('/').map_or("/", |i| &rest[i..]).to_owned())
            })
            .unwrap_or_else(|| "/".to_owned());
        hook["clientConfig"] = json!({
            "url": format!("{}{path}", base_url.trim_end_matches('/')),
            "caBundle": ca_bundle,
        });
    }
    config
}

/// Writes `object` of `kind` as `field_manager`: its `field` (a JSON pointer) set to `value`,
/// with the record of what it was (created when absent), in one write.
async fn write_recorded(
    client: &kube::Client,
    kind: &str,
    object: &Value,
    field: &str,
    field_manager: &str,
) -> Result<(), kube::Error> {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let api = api(client, kind);
    let live = api.get_opt(name).await?;
    let live = live
        .map(|l| serde_json::to_value(&l))
        .transpose()
        .map_err(kube::Error::SerdeError)?;
    let record = record::record(field_manager, kind, live.as_ref());
    let value = object.pointer(field).cloned().unwrap_or(Value::Null);
    match live {
        None => {
            let mut new = object.clone();
            new["metadata"]["annotations"] = annotations_with(None, &record);
            let new: DynamicObject =
                serde_json::from_value(new).map_err(kube::Error::SerdeError)?;
            let params = PostParams {
                field_manager: Some(field_manager.to_owned()),
                ..PostParams::default()
            };
            api.create(&params, &new).await.map(drop)
        }
        Some(live) => {
            let annotations = annotations_with(live.pointer("/metadata/annotations"), &record);
            let ops = json!([
                {"op": "test", "path": "/metadata/resourceVersion",
                 "value": live.pointer("/metadata/resourceVersion")},
                {"op": "add", "path": field, "value": value},
                {"op": "add", "path": "/metadata/annotations", "value": annotations},
            ]);
            let params = PatchParams {
                field_manager: Some(field_manager.to_owned()),
                ..PatchParams::default()
            };
            api.patch(name, &params, &json_patch(ops)?).await.map(drop)
        }
    }
}

/// Writes `configurations` (MutatingWebhookConfiguration and ValidatingWebhookConfiguration
/// objects, as `kube-codegen webhooks` writes them) to the cluster as `field_manager`, each
/// webhook's client configuration replaced by `url` `<base_url><path>` (the path of its
/// Service configuration, or of its URL) and `caBundle` `ca_pem`; their annotations
/// (cert-manager's `inject-ca-from`) are left out. Each object records what it was before
/// (see [`record`]); a configuration that exists (the operator deployed on the same cluster)
/// gets its webhooks back at [`Installed::uninstall`] or [`restore`], one created here is
/// deleted.
pub async fn install(
    client: &kube::Client,
    configurations: &[Value],
    base_url: &str,
    ca_pem: &str,
    field_manager: &str,
) -> Result<Installed, kube::Error> {
    let ca_bundle = apiserver_rules::base64::base64_encode(ca_pem.as_bytes());
    let mut installed = Installed {
        objects: Vec::new(),
        field_manager: field_manager.to_owned(),
        client: client.clone(),
    };
    for config in configurations {
        let mut config = pointed_at(config, base_url, &ca_bundle);
        // The CA written here is the one to trust: cert-manager must not inject another.
        if let Some(meta) = config["metadata"].as_object_mut() {
            meta.remove("annotations");
        }
        let kind = config["kind"].as_str().unwrap_or_default().to_owned();
        let name = config["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if let Err(e) = write_recorded(client, &kind, &config, "/webhooks", field_manager).await {
            // Nothing half installed: `failurePolicy: Fail` webhooks pointing at a process
            // that gave up would refuse every write.
            let _ = installed.uninstall().await;
            return Err(e);
        }
        installed.objects.push((kind, name));
    }
    Ok(installed)
}

impl Installed {
    /// Puts the configurations back as they were (deletes those [`install`] created); one
    /// gone, or changed since by someone else, is left alone.
    pub async fn uninstall(self) -> Result<(), kube::Error> {
        for (kind, name) in &self.objects {
            record::restore_object(&self.client, kind, name, Some(&self.field_manager)).await?;
        }
        Ok(())
    }

    /// `(kind, name)` of each configuration written.
    pub fn objects(&self) -> &[(String, String)] {
        &self.objects
    }
}

/// A CRD's conversion pointed at a development server by [`install_conversion`].
#[derive(Clone)]
pub struct InstalledConversion {
    crd: String,
    field_manager: String,
    client: kube::Client,
}

impl std::fmt::Debug for InstalledConversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstalledConversion")
            .field("crd", &self.crd)
            .field("field_manager", &self.field_manager)
            .finish()
    }
}

/// Points the conversion of the CRD `crd` (`<plural>.<group>`) at `url` (the serving
/// address and the kind's conversion path) with `ca_pem` as `caBundle`, as `field_manager`;
/// the CRD records the conversion it had (see [`record`]), and
/// [`InstalledConversion::uninstall`] or [`restore`] puts it back.
pub async fn install_conversion(
    client: &kube::Client,
    crd: &str,
    url: &str,
    ca_pem: &str,
    field_manager: &str,
) -> Result<InstalledConversion, kube::Error> {
    let object = json!({
        "metadata": {"name": crd},
        "spec": {"conversion": {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": url,
                    "caBundle": apiserver_rules::base64::base64_encode(ca_pem.as_bytes()),
                },
            },
        }},
    });
    // A missing CRD is an error here (NotFound), not something to create.
    api(client, "CustomResourceDefinition").get(crd).await?;
    // The whole conversion is replaced (a JSON patch), so no Service is left beside the URL.
    write_recorded(
        client,
        "CustomResourceDefinition",
        &object,
        "/spec/conversion",
        field_manager,
    )
    .await?;
    Ok(InstalledConversion {
        crd: crd.to_owned(),
        field_manager: field_manager.to_owned(),
        client: client.clone(),
    })
}

/// The conversions of every CRD a [`WebhookServer`](super::WebhookServer) converts, pointed
/// at it by [`install_conversions`].
#[derive(Clone, Debug, Default)]
pub struct InstalledConversions {
    installed: Vec<InstalledConversion>,
}

impl InstalledConversions {
    /// The CRDs whose conversion was pointed at the server.
    pub fn crds(&self) -> Vec<&str> {
        self.installed.iter().map(|c| c.crd.as_str()).collect()
    }

    /// Puts back the conversion each CRD had before; the first error, after trying all.
    pub async fn uninstall(self) -> Result<(), kube::Error> {
        let mut first = Ok(());
        for installed in self.installed {
            if let Err(e) = installed.uninstall().await
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
}

/// Points the conversion of each CRD `server` converts (its
/// [`conversion_crds`](super::WebhookServer::conversion_crds)) at `base` (the serving
/// address, `https://host:port`) and that kind's path, with `ca_pem` as `caBundle`, as
/// `field_manager`. All or nothing: when one fails, those already pointed are put back.
pub async fn install_conversions(
    client: &kube::Client,
    server: &super::WebhookServer,
    base: &str,
    ca_pem: &str,
    field_manager: &str,
) -> Result<InstalledConversions, kube::Error> {
    let mut done = InstalledConversions::default();
    for (path, crd) in server.conversion_crds() {
        let url = format!("{base}{path}");
        match install_conversion(client, crd, &url, ca_pem, field_manager).await {
            Ok(installed) => done.installed.push(installed),
            Err(e) => {
                let _ = done.uninstall().await;
                return Err(e);
            }
        }
    }
    Ok(done)
}

impl InstalledConversion {
    /// Puts back the conversion the CRD had before (unless someone else changed it since).
    pub async fn uninstall(self) -> Result<(), kube::Error> {
        let kind = "CustomResourceDefinition";
        record::restore_object(&self.client, kind, &self.crd, Some(&self.field_manager))
            .await
            .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_key_is_never_written_through_a_planted_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = PrivateDir::new("kube-codegen-dev-test").unwrap();
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // Someone else's file, and a link to it where the key goes.
        let elsewhere = PrivateDir::new("kube-codegen-dev-victim").unwrap();
        let victim = elsewhere.path().join("victim");
        std::fs::write(&victim, "theirs").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("tls.key")).unwrap();
        certificate(dir.path(), &["127.0.0.1".to_owned()]).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "theirs");
        let key = dir.path().join("tls.key");
        let meta = std::fs::symlink_metadata(&key).unwrap();
        assert!(
            meta.file_type().is_file(),
            "the link was replaced by the key"
        );
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert!(
            std::fs::read_to_string(&key)
                .unwrap()
                .contains("PRIVATE KEY")
        );
        let path = dir.path().to_owned();
        drop(dir);
        assert!(!path.exists(), "removed when dropped");
    }
}
