//! The serving certificate: `tls.crt` and `tls.key` in a directory, read again when either
//! file changes, so a renewed Secret is served from the next handshake on; and the PEM
//! reading the self-managed certificates ([`super::certs`]) share.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// The serving certificate and key in a directory (`tls.crt`, `tls.key`), loaded again when
/// either file changes.
pub struct TlsFiles {
    dir: PathBuf,
    current: Mutex<(Stamp, Arc<CertifiedKey>)>,
}

/// What tells a changed file: its modification time and length, for both files.
type Stamp = [(Option<SystemTime>, u64); 2];

impl std::fmt::Debug for TlsFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFiles").field("dir", &self.dir).finish()
    }
}

impl TlsFiles {
    /// The certificate in `dir`, or why it cannot be served.
    pub fn load(dir: PathBuf) -> std::io::Result<Self> {
        let stamp = stamp(&dir);
        let key = certified_key(&dir)?;
        Ok(Self {
            dir,
            current: Mutex::new((stamp, key)),
        })
    }

    /// The files' paths.
    pub fn paths(&self) -> [PathBuf; 2] {
        [self.dir.join("tls.crt"), self.dir.join("tls.key")]
    }
}

fn stamp(dir: &Path) -> Stamp {
    ["tls.crt", "tls.key"]
        .map(|f| std::fs::metadata(dir.join(f)).map_or((None, 0), |m| (m.modified().ok(), m.len())))
}

fn certified_key(dir: &Path) -> std::io::Result<Arc<CertifiedKey>> {
    let read = |file: &str| {
        std::fs::read(dir.join(file))
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {file}: {e}", dir.display())))
    };
    let (crt, key) = (read("tls.crt")?, read("tls.key")?);
    certified_key_from_pem(&crt, &key).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {e}", dir.display()),
        )
    })
}

/// The serving certificate of `tls.crt` and `tls.key` as PEM (the chain, then its key), or
/// what is wrong with them, naming the file.
pub(crate) fn certified_key_from_pem(crt: &[u8], key: &[u8]) -> Result<Arc<CertifiedKey>, String> {
    let invalid = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(crt)
        .collect::<Result<_, _>>()
        .map_err(|e| invalid("tls.crt", &e))?;
    if certs.is_empty() {
        return Err(invalid("tls.crt", &"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| invalid("tls.key", &e))?;
    let signer = rustls::crypto::ring::default_provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| invalid("tls.key", &e))?;
    let key = CertifiedKey::new(certs, signer);
    // A certificate renewed while its key is still the old one is not served.
    key.keys_match()
        .map_err(|e| invalid("tls.key", &format!("does not match tls.crt: {e}")))?;
    Ok(Arc::new(key))
}

impl ResolvesServerCert for TlsFiles {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = stamp(&self.dir);
        if now != current.0 {
            match certified_key(&self.dir) {
                Ok(key) => *current = (now, key),
                // Half-written files are read again on the next handshake.
                Err(err) => tracing::warn!(%err, "webhook server: keeping the last certificate"),
            }
        }
        Some(Arc::clone(&current.1))
    }
}
