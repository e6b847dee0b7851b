//! Development mode: serve webhooks from a laptop to a cluster whose API server can reach
//! it (a local kube-apiserver, kind with host networking), with no cert-manager and no
//! Service.
//!
//! [`certificate`] makes a CA and a serving certificate for the serving address and writes
//! them where [`WebhookServer`](super::WebhookServer) reads them; [`install`] writes the
//! webhook configurations (those `kube-codegen webhooks` generated, with Service client
//! configurations) to the cluster with a URL client configuration pointing at the serving
//! address and the CA as `caBundle`; [`Installed::uninstall`] removes them again, so a
//! stopped process does not leave `failurePolicy: Fail` webhooks refusing every write.

use std::path::Path;

use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use serde_json::Value;

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
    std::fs::write(dir.join("tls.crt"), cert.pem())?;
    Ok(ca.pem())
}

/// This year, by the system clock.
fn this_year() -> i32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    1970 + i32::try_from(secs / 31_556_952).unwrap_or(0)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

/// Webhook configurations written to a cluster by [`install`].
#[derive(Clone)]
pub struct Installed {
    objects: Vec<(String, String)>,
    client: kube::Client,
}

impl std::fmt::Debug for Installed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Installed")
            .field("objects", &self.objects)
            .finish()
    }
}

/// A MutatingWebhookConfiguration or ValidatingWebhookConfiguration client.
fn api(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind);
    let plural = format!("{}s", kind.to_ascii_lowercase());
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, &plural),
    )
}

/// Writes `configurations` (MutatingWebhookConfiguration and ValidatingWebhookConfiguration
/// objects, as `kube-codegen webhooks` writes them) to the cluster by server-side apply as
/// `field_manager`, each webhook's client configuration replaced by `url` `<base_url><path>`
/// (the path of its Service configuration, or of its URL) and `caBundle` `ca_pem`; their
/// annotations (cert-manager's `inject-ca-from`) are left out.
pub async fn install(
    client: &kube::Client,
    configurations: &[Value],
    base_url: &str,
    ca_pem: &str,
    field_manager: &str,
) -> Result<Installed, kube::Error> {
    let ca_bundle = apiserver_rules::base64::base64_encode(ca_pem.as_bytes());
    let mut objects = Vec::new();
    for config in configurations {
        let mut config = config.clone();
        // The CA written here is the one to trust: cert-manager must not inject another.
        if let Some(meta) = config["metadata"].as_object_mut() {
            meta.remove("annotations");
        }
        let kind = config["kind"].as_str().unwrap_or_default().to_owned();
        let name = config["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
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
            hook["clientConfig"] = serde_json::json!({
                "url": format!("{}{path}", base_url.trim_end_matches('/')),
                "caBundle": ca_bundle,
            });
        }
        let params = PatchParams::apply(field_manager).force();
        let applied = api(client, &kind)
            .patch(&name, &params, &Patch::Apply(&config))
            .await;
        if let Err(e) = applied {
            // Nothing half installed: `failurePolicy: Fail` webhooks pointing at a process
            // that gave up would refuse every write.
            let partial = Installed {
                objects,
                client: client.clone(),
            };
            let _ = partial.uninstall().await;
            return Err(e);
        }
        objects.push((kind, name));
    }
    Ok(Installed {
        objects,
        client: client.clone(),
    })
}

impl Installed {
    /// Removes the configurations again; a missing one is not an error.
    pub async fn uninstall(self) -> Result<(), kube::Error> {
        for (kind, name) in &self.objects {
            match api(&self.client, kind)
                .delete(name, &DeleteParams::default())
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(e),
            }
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
    previous: serde_json::Value,
    client: kube::Client,
}

impl std::fmt::Debug for InstalledConversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstalledConversion")
            .field("crd", &self.crd)
            .finish()
    }
}

fn crds(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions"),
    )
}

/// Points the conversion of the CRD `crd` (`<plural>.<group>`) at `url` (the serving
/// address and the kind's conversion path) with `ca_pem` as `caBundle`;
/// [`InstalledConversion::uninstall`] puts back the conversion it had.
pub async fn install_conversion(
    client: &kube::Client,
    crd: &str,
    url: &str,
    ca_pem: &str,
) -> Result<InstalledConversion, kube::Error> {
    let api = crds(client);
    let current = api.get(crd).await?;
    let previous = current
        .data
        .pointer("/spec/conversion")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"strategy": "None"}));
    let conversion = serde_json::json!({
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": url,
                "caBundle": apiserver_rules::base64::base64_encode(ca_pem.as_bytes()),
            },
        },
    });
    replace_conversion(&api, crd, conversion).await?;
    Ok(InstalledConversion {
        crd: crd.to_owned(),
        previous,
        client: client.clone(),
    })
}

/// Sets `spec.conversion` as a whole (a JSON patch, so no Service is left beside a URL).
async fn replace_conversion(
    api: &Api<DynamicObject>,
    crd: &str,
    conversion: serde_json::Value,
) -> Result<(), kube::Error> {
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "add", "path": "/spec/conversion", "value": conversion}
    ]))
    .map_err(kube::Error::SerdeError)?;
    api.patch(crd, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
        .map(drop)
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
/// address, `https://host:port`) and that kind's path, with `ca_pem` as `caBundle`. All or
/// nothing: when one fails, those already pointed are put back.
pub async fn install_conversions(
    client: &kube::Client,
    server: &super::WebhookServer,
    base: &str,
    ca_pem: &str,
) -> Result<InstalledConversions, kube::Error> {
    let mut done = InstalledConversions::default();
    for (path, crd) in server.conversion_crds() {
        match install_conversion(client, crd, &format!("{base}{path}"), ca_pem).await {
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
    /// Puts back the conversion the CRD had before.
    pub async fn uninstall(self) -> Result<(), kube::Error> {
        replace_conversion(&crds(&self.client), &self.crd, self.previous).await
    }
}
