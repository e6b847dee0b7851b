//! The certificates themselves: a CA and a serving certificate made with rcgen, and what a
//! stored certificate says (validity, names, issuer, serial), read back with x509-parser.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::CertError;

/// One certificate as PEM, with what the manager decides on.
#[derive(Debug, Clone)]
pub(super) struct Cert {
    /// The PEM block.
    pub(super) pem: String,
    /// Validity, in seconds since the epoch.
    pub(super) not_before: i64,
    pub(super) not_after: i64,
    /// The raw subject and issuer names (a serving certificate's issuer is its CA's subject).
    pub(super) subject: Vec<u8>,
    pub(super) issuer: Vec<u8>,
    /// DNS names and IP addresses of the subject alternative names.
    pub(super) names: BTreeSet<String>,
    /// The subject public key info (DER): which key the certificate is for.
    pub(super) public_key: Vec<u8>,
}

impl Cert {
    /// When a third of its lifetime remains: time to make the next one.
    pub(super) fn renew_at(&self) -> i64 {
        self.not_after - (self.not_after - self.not_before) / 3
    }

    /// Whether it is past [`Cert::renew_at`] at `now`.
    pub(super) fn due(&self, now: i64) -> bool {
        now >= self.renew_at()
    }
}

/// The certificates of a PEM text (a bundle holds several), in order.
pub(super) fn parse(pem: &[u8]) -> Result<Vec<Cert>, String> {
    let ders: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("not PEM certificates: {e}"))?;
    if ders.is_empty() {
        return Err("no certificate".to_owned());
    }
    ders.iter().map(|der| read(der)).collect()
}

fn read(der: &CertificateDer<'_>) -> Result<Cert, String> {
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| format!("not an X.509 certificate: {e}"))?;
    let mut names = BTreeSet::new();
    if let Ok(Some(san)) = cert.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                x509_parser::extensions::GeneralName::DNSName(dns) => {
                    names.insert((*dns).to_owned());
                }
                x509_parser::extensions::GeneralName::IPAddress(ip) => {
                    let ip = match ip.len() {
                        4 => <[u8; 4]>::try_from(*ip).map(IpAddr::from).ok(),
                        16 => <[u8; 16]>::try_from(*ip).map(IpAddr::from).ok(),
                        _ => None,
                    };
                    names.extend(ip.map(|ip| ip.to_string()));
                }
                _ => {}
            }
        }
    }
    Ok(Cert {
        pem: pem_of(der),
        not_before: cert.validity().not_before.timestamp(),
        not_after: cert.validity().not_after.timestamp(),
        subject: cert.subject().as_raw().to_vec(),
        issuer: cert.issuer().as_raw().to_vec(),
        names,
        public_key: cert.public_key().raw.to_vec(),
    })
}

/// The PEM block of a DER certificate (64 columns, as `openssl` writes it).
fn pem_of(der: &[u8]) -> String {
    let base64 = apiserver_rules::base64::base64_encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in base64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem
}

/// Seconds since the epoch, by the system clock.
pub(super) fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// How far back a certificate's `notBefore` is set: a tenth of its lifetime, at most an
/// hour, so a caller whose clock is a little behind still accepts it.
fn backdate(lifetime: Duration) -> Duration {
    (lifetime / 10).min(Duration::from_secs(3600))
}

fn date(at: SystemTime) -> time::OffsetDateTime {
    time::OffsetDateTime::from(at)
}

fn failed(what: &str) -> impl Fn(rcgen::Error) -> CertError + '_ {
    move |e| CertError::Certificate(format!("cannot make the {what}: {e}"))
}

/// A new CA named after `name`, valid for `lifetime` from now: its certificate and key, as PEM.
pub(super) fn new_ca(name: &str, lifetime: Duration) -> Result<(String, String), CertError> {
    let fail = failed("CA");
    let now = SystemTime::now();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(&fail)?;
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Constrained(0));
    // A name of its own per CA (the time it was made): a serving certificate names the
    // CA that signed it, so the manager tells which CA of the bundle signed it.
    let made = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        format!("{name}-ca@{}.{:09}", made.as_secs(), made.subsec_nanos()),
    );
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = date(now - backdate(lifetime));
    params.not_after = date(now + lifetime);
    let key = rcgen::KeyPair::generate().map_err(&fail)?;
    let cert = params.self_signed(&key).map_err(&fail)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// A serving certificate for `hosts` (DNS names or IP addresses), signed by the CA
/// `ca_pem` whose key is `ca_key_pem`, valid for `lifetime` from now but never after the
/// CA (`ca_not_after`): its certificate and key, as PEM.
pub(super) fn new_serving(
    hosts: &[String],
    ca_pem: &str,
    ca_key_pem: &str,
    ca_not_after: i64,
    lifetime: Duration,
) -> Result<(String, String), CertError> {
    let fail = failed("serving certificate");
    let ca_key = rcgen::KeyPair::from_pem(ca_key_pem).map_err(&fail)?;
    let issuer = rcgen::Issuer::from_ca_cert_pem(ca_pem, ca_key).map_err(&fail)?;
    let now = SystemTime::now();
    let mut params = rcgen::CertificateParams::new(hosts.to_vec()).map_err(&fail)?;
    params.distinguished_name.push(
        rcgen::DnType::CommonName,
        hosts.first().map_or("webhook", String::as_str),
    );
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::DigitalSignature,
        rcgen::KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = date(now - backdate(lifetime));
    let ca_end = UNIX_EPOCH + Duration::from_secs(u64::try_from(ca_not_after).unwrap_or(0));
    params.not_after = date((now + lifetime).min(ca_end));
    let key = rcgen::KeyPair::generate().map_err(&fail)?;
    let cert = params.signed_by(&key, &issuer).map_err(&fail)?;
    Ok((cert.pem(), key.serialize_pem()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serving_certificate_names_its_hosts_and_its_ca() {
        let (ca, ca_key) = new_ca("demo", Duration::from_secs(3000)).unwrap();
        let ca = parse(ca.as_bytes()).unwrap().remove(0);
        let hosts = ["svc.ns.svc".to_owned(), "127.0.0.1".to_owned()];
        let (crt, _) = new_serving(
            &hosts,
            &ca.pem,
            &ca_key,
            ca.not_after,
            Duration::from_secs(600),
        )
        .unwrap();
        let crt = parse(crt.as_bytes()).unwrap().remove(0);
        assert_eq!(crt.issuer, ca.subject);
        assert_eq!(crt.names, hosts.iter().cloned().collect());
        // Backdated by a tenth: renewed when a third of the 660 seconds remain.
        assert_eq!(crt.not_after - crt.not_before, 660);
        assert_eq!(crt.renew_at(), crt.not_after - 220);
        // Never valid after its CA.
        let (short, _) = new_serving(
            &hosts,
            &ca.pem,
            &ca_key,
            ca.not_after,
            Duration::from_secs(9000),
        )
        .unwrap();
        assert_eq!(parse(short.as_bytes()).unwrap()[0].not_after, ca.not_after);
    }

    #[test]
    fn pem_blocks_read_back_as_they_were() {
        let (ca, _) = new_ca("demo", Duration::from_secs(60)).unwrap();
        let parsed = parse(ca.as_bytes()).unwrap().remove(0);
        assert_eq!(
            parse(parsed.pem.as_bytes()).unwrap()[0].subject,
            parsed.subject
        );
        assert!(parse(b"nothing").is_err());
    }
}
