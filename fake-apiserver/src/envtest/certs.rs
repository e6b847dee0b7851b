//! The control plane's credentials, made fresh per start: a CA and a serving certificate
//! for `127.0.0.1` and `localhost`, a service-account signing key, and a bearer token for an
//! admin user in `system:masters` (a static token file; envtest gives a client certificate
//! instead, which needs nothing more of kube-apiserver than this does).

use std::path::{Path, PathBuf};

use super::error::{EnvtestError, fail};

/// Where the credentials are, and what the kubeconfig needs of them.
pub(super) struct Files {
    pub(super) dir: PathBuf,
    pub(super) ca: PathBuf,
    pub(super) serving_cert: PathBuf,
    pub(super) serving_key: PathBuf,
    pub(super) sa_key: PathBuf,
    pub(super) sa_public: PathBuf,
    pub(super) tokens: PathBuf,
    pub(super) ca_pem: String,
    pub(super) token: String,
}

impl Files {
    /// A kubeconfig for the admin user at `url`.
    pub(super) fn kubeconfig(&self, url: &str) -> String {
        let ca = apiserver_rules::base64::base64_encode(self.ca_pem.as_bytes());
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {url}\n    \
             certificate-authority-data: {ca}\nusers:\n- name: envtest-admin\n  user:\n    token: {}\n\
             contexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest-admin\n    \
             namespace: default\ncurrent-context: envtest\n",
            self.token
        )
    }
}

fn rcgen_failed(what: &'static str) -> impl Fn(rcgen::Error) -> EnvtestError {
    move |e| fail(what, e)
}

/// Writes the credentials into `dir` (private files: the directory is the process's own).
pub(super) fn write(dir: &Path) -> Result<Files, EnvtestError> {
    let ca_key = rcgen::KeyPair::generate().map_err(rcgen_failed("a CA key"))?;
    let mut ca_params =
        rcgen::CertificateParams::new(Vec::<String>::new()).map_err(rcgen_failed("the CA"))?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-envtest-ca");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca_params
        .self_signed(&ca_key)
        .map_err(rcgen_failed("the CA"))?;
    let issuer = rcgen::Issuer::new(ca_params, &ca_key);
    let mut serving =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .map_err(rcgen_failed("the serving certificate"))?;
    serving
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-apiserver");
    serving.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let serving_key = rcgen::KeyPair::generate().map_err(rcgen_failed("a serving key"))?;
    let serving_cert = serving
        .signed_by(&serving_key, &issuer)
        .map_err(rcgen_failed("the serving certificate"))?;
    let sa_key = rcgen::KeyPair::generate().map_err(rcgen_failed("a service-account key"))?;
    let token = token()?;
    let files = Files {
        dir: dir.to_path_buf(),
        ca: dir.join("ca.crt"),
        serving_cert: dir.join("apiserver.crt"),
        serving_key: dir.join("apiserver.key"),
        sa_key: dir.join("sa.key"),
        sa_public: dir.join("sa.pub"),
        tokens: dir.join("tokens.csv"),
        ca_pem: ca.pem(),
        token,
    };
    let put = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| fail(format_args!("writing {}", path.display()), e))
    };
    put(&files.ca, &files.ca_pem)?;
    put(&files.serving_cert, &serving_cert.pem())?;
    put(&files.serving_key, &serving_key.serialize_pem())?;
    put(&files.sa_key, &sa_key.serialize_pem())?;
    put(&files.sa_public, &sa_key.public_key_pem())?;
    // token,user,uid,"groups"
    put(
        &files.tokens,
        &format!(
            "{},envtest-admin,envtest-admin,\"system:masters\"\n",
            files.token
        ),
    )?;
    Ok(files)
}

/// 32 random bytes as hex, from the operating system's generator.
fn token() -> Result<String, EnvtestError> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| EnvtestError("no randomness for the admin token".into()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
