//! The release index: versions, platforms, archives and their digests, and the downloads.

use std::collections::BTreeMap;

/// A platform as Go names it (`linux`/`amd64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    os: String,
    arch: String,
}

impl Platform {
    /// The given names, or this machine's in Go's words.
    pub fn new(os: Option<&str>, arch: Option<&str>) -> Platform {
        let os = os.map(str::to_owned).unwrap_or_else(|| {
            match std::env::consts::OS {
                "macos" => "darwin",
                other => other,
            }
            .to_owned()
        });
        let arch = arch.map(str::to_owned).unwrap_or_else(|| {
            match std::env::consts::ARCH {
                "x86_64" => "amd64",
                "aarch64" => "arm64",
                "powerpc64" => "ppc64le",
                other => other,
            }
            .to_owned()
        });
        Platform { os, arch }
    }

    /// `linux-amd64`.
    pub fn dashed(&self) -> String {
        format!("{}-{}", self.os, self.arch)
    }
}

/// A release version, `X.Y.Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(u64, u64, u64);

/// What `--version` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `1.36`, `1.36.x`: the newest release of the series.
    Series(u64, u64),
    /// `1.36.2`.
    Exact(Version),
}

impl Version {
    /// `1.36.2`.
    pub fn plain(&self) -> String {
        format!("{}.{}.{}", self.0, self.1, self.2)
    }

    /// `1.36`, `v1.36`, `1.36.x`, `1.36.*`, `1.36.2` or `v1.36.2`.
    pub fn parse_request(text: &str) -> Result<Request, String> {
        let text = text.trim().trim_start_matches('v');
        let parts: Vec<&str> = text.split('.').collect();
        let number = |s: &str| -> Result<u64, String> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("{s:?} is not a number"));
            }
            s.parse().map_err(|_| format!("{s:?} is too large"))
        };
        match parts.as_slice() {
            [major, minor] => Ok(Request::Series(number(major)?, number(minor)?)),
            [major, minor, "x" | "*"] => Ok(Request::Series(number(major)?, number(minor)?)),
            [major, minor, patch] => Ok(Request::Exact(Version(
                number(major)?,
                number(minor)?,
                number(patch)?,
            ))),
            _ => Err("not a version".to_owned()),
        }
    }
}

/// One archive of the index.
#[derive(Debug, Clone)]
pub struct Archive {
    pub name: String,
    pub sha512: String,
    pub link: String,
}

/// The index: releases (pre-releases left out) and their archives by platform.
#[derive(Debug, Default)]
pub struct Index {
    releases: BTreeMap<Version, BTreeMap<String, Archive>>,
}

/// `envtest-v1.36.2-linux-amd64.tar.gz` as its version and platform.
fn archive_name(name: &str) -> Option<(Version, String)> {
    let rest = name.strip_prefix("envtest-v")?.strip_suffix(".tar.gz")?;
    let (version, platform) = rest.split_once('-')?;
    let parts: Vec<u64> = version
        .split('.')
        .map(|p| {
            p.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect::<Option<_>>()?;
    let [major, minor, patch] = parts.as_slice() else {
        return None;
    };
    let (os, arch) = platform.split_once('-')?;
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    (word(os) && word(arch)).then(|| (Version(*major, *minor, *patch), platform.to_owned()))
}

impl Index {
    /// Reads `releases: {vX.Y.Z: {archive: {hash, selfLink}}}`.
    pub fn parse(text: &str) -> Result<Index, String> {
        let doc: serde_json::Value =
            serde_saphyr::from_str(text).map_err(|e| format!("not YAML: {e}"))?;
        let releases = doc
            .get("releases")
            .and_then(serde_json::Value::as_object)
            .ok_or("no `releases` map")?;
        let mut index = Index::default();
        for archives in releases.values() {
            let Some(archives) = archives.as_object() else {
                continue;
            };
            for (name, entry) in archives {
                // Pre-releases and names of another shape are not for us, as for setup-envtest.
                let Some((version, platform)) = archive_name(name) else {
                    continue;
                };
                let field = |key: &str| {
                    entry
                        .get(key)
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| format!("{name}: no `{key}`"))
                };
                // An entry without a usable digest or link is left out: fetching it could not
                // be checked, and the rest of the index stays usable.
                let (Ok(sha512), Ok(link)) = (field("hash"), field("selfLink")) else {
                    continue;
                };
                if sha512.len() != 128 || !sha512.bytes().all(|b| b.is_ascii_hexdigit()) {
                    continue;
                }
                index.releases.entry(version).or_default().insert(
                    platform,
                    Archive {
                        name: name.clone(),
                        sha512,
                        link,
                    },
                );
            }
        }
        Ok(index)
    }

    /// The versions with an archive for `platform`, newest first.
    pub fn versions_for(&self, platform: &Platform) -> Vec<Version> {
        let key = platform.dashed();
        self.releases
            .iter()
            .rev()
            .filter(|(_, archives)| archives.contains_key(&key))
            .map(|(v, _)| *v)
            .collect()
    }

    /// The version `request` names and its archive for `platform`.
    pub fn resolve(
        &self,
        request: &Request,
        platform: &Platform,
    ) -> Result<(Version, Archive), String> {
        let candidates: Vec<(&Version, &BTreeMap<String, Archive>)> = self
            .releases
            .iter()
            .filter(|(v, _)| match request {
                Request::Series(major, minor) => v.0 == *major && v.1 == *minor,
                Request::Exact(exact) => *v == exact,
            })
            .collect();
        let Some((version, archives)) = candidates.last() else {
            let asked = match request {
                Request::Series(a, b) => format!("{a}.{b}"),
                Request::Exact(v) => v.plain(),
            };
            let newest: Vec<String> = self
                .releases
                .keys()
                .rev()
                .take(5)
                .map(Version::plain)
                .collect();
            return Err(format!(
                "the index has no release {asked} (newest: {})",
                newest.join(", ")
            ));
        };
        let key = platform.dashed();
        match archives.get(&key) {
            Some(archive) => Ok((**version, archive.clone())),
            None => Err(format!(
                "envtest {} has no archive for {key} (it has {})",
                version.plain(),
                archives.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }
}

/// The hex SHA-512 digest of `bytes`.
pub fn sha512_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA512, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The most an archive may be (today's are about 60 MB).
const MAX_ARCHIVE: usize = 1 << 30;

/// GET `url` (http or https, redirects followed, up to 10): the body, at most `limit` bytes.
async fn get(url: &str, limit: usize, timeout: std::time::Duration) -> Result<Vec<u8>, String> {
    use http_body_util::BodyExt;
    let provider = rustls::crypto::ring::default_provider();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_native_roots(provider)
        .map_err(|e| format!("no TLS roots: {e}"))?
        .https_or_http()
        .enable_http1()
        .build();
    let client: hyper_util::client::legacy::Client<_, http_body_util::Empty<bytes::Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(https);
    let work = async {
        let mut url = url.to_owned();
        for _ in 0..10 {
            let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
            let response = client
                .get(uri.clone())
                .await
                .map_err(|e| format!("{e:#}"))?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(http::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| format!("{status} without a Location"))?;
                let next = resolve(&uri, location);
                // The digest is only as trustworthy as the index: never from https to http.
                if uri.scheme_str() == Some("https") && !next.starts_with("https://") {
                    return Err(format!("{status} from https to {next}: refused"));
                }
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(format!("the server answered {status}"));
            }
            let body = http_body_util::Limited::new(response.into_body(), limit)
                .collect()
                .await
                .map_err(|e| format!("reading the body: {e}"))?;
            return Ok(body.to_bytes().to_vec());
        }
        Err("more than 10 redirects".to_owned())
    };
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| format!("no complete answer within {}s", timeout.as_secs()))?
}

/// `location` (absolute, absolute-path or relative) against `base`.
fn resolve(base: &http::Uri, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        return location.to_owned();
    }
    let origin = format!(
        "{}://{}",
        base.scheme_str().unwrap_or("https"),
        base.authority().map(|a| a.as_str()).unwrap_or("")
    );
    if location.starts_with('/') {
        return format!("{origin}{location}");
    }
    let path = base.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    format!("{origin}{dir}{location}")
}

/// The index's text.
pub async fn download_text(url: &str) -> Result<String, String> {
    let bytes = get(url, 16 << 20, std::time::Duration::from_secs(60)).await?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())
}

/// An archive.
pub async fn download_bytes(url: &str) -> Result<Vec<u8>, String> {
    get(url, MAX_ARCHIVE, std::time::Duration::from_secs(900)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_archive_names_parse() {
        assert_eq!(Version::parse_request("1.36"), Ok(Request::Series(1, 36)));
        assert_eq!(
            Version::parse_request("v1.36.x"),
            Ok(Request::Series(1, 36))
        );
        assert_eq!(
            Version::parse_request("1.36.2"),
            Ok(Request::Exact(Version(1, 36, 2)))
        );
        assert!(Version::parse_request("1").is_err());
        assert!(Version::parse_request("1.36.2-beta.0").is_err());
        assert_eq!(
            archive_name("envtest-v1.36.2-linux-amd64.tar.gz"),
            Some((Version(1, 36, 2), "linux-amd64".to_owned()))
        );
        assert_eq!(
            archive_name("envtest-v1.35.0-alpha.3-linux-amd64.tar.gz"),
            None
        );
    }
}
