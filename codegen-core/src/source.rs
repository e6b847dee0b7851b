//! The input: every `.rs` file under the API directory, read in a stable order, and the
//! fingerprints the generated tree checks them against (`inputs`).

use std::path::{Path, PathBuf};

/// One source file of the API tree.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path as shown in diagnostics (the input directory joined with the relative path).
    pub path: PathBuf,
    /// Path relative to the input directory.
    pub relative: PathBuf,
    /// The file's text.
    pub text: String,
}

/// A file or directory of the input that could not be read.
#[derive(Debug)]
pub struct LoadError {
    /// The file or directory.
    pub path: PathBuf,
    /// Why.
    pub error: std::io::Error,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot read `{}`: {}", self.path.display(), self.error)
    }
}

impl std::error::Error for LoadError {}

/// Reads every `.rs` file under `dir`, sorted by path, following symbolic links (a link
/// back to a directory already read is an error, not a loop). The project's one source
/// loader: the CLI's `generate`, `verify`, `crds`, `rbac` and `webhooks` read their input
/// with it.
pub fn load(dir: &Path) -> Result<Vec<SourceFile>, LoadError> {
    let mut files = Vec::new();
    let mut seen = Vec::new();
    walk(dir, Path::new(""), &mut files, &mut seen)?;
    files.sort_by(|a, b| a.relative.cmp(&b.relative));
    Ok(files)
}

fn walk(
    root: &Path,
    rel: &Path,
    out: &mut Vec<SourceFile>,
    seen: &mut Vec<PathBuf>,
) -> Result<(), LoadError> {
    // `root` itself as given (joining an empty path would add a `/` to messages).
    let dir = if rel.as_os_str().is_empty() {
        root.to_owned()
    } else {
        root.join(rel)
    };
    let fail = |path: &Path, error: std::io::Error| LoadError {
        path: path.to_owned(),
        error,
    };
    let canonical = dir.canonicalize().map_err(|e| fail(&dir, e))?;
    if seen.contains(&canonical) {
        return Err(fail(
            &dir,
            std::io::Error::other("a symbolic link leads back to a directory already read"),
        ));
    }
    seen.push(canonical);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| fail(&dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| fail(&dir, e))?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let rel_path = rel.join(entry.file_name());
        let path = root.join(&rel_path);
        // Follows symbolic links: a linked group directory is read like any other.
        let meta = std::fs::metadata(&path).map_err(|e| {
            let dangling = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_symlink());
            if dangling {
                fail(
                    &path,
                    std::io::Error::new(e.kind(), format!("{e} (a dangling symbolic link)")),
                )
            } else {
                fail(&path, e)
            }
        })?;
        if meta.is_dir() {
            walk(root, &rel_path, out, seen)?;
        } else if rel_path.extension().is_some_and(|e| e == "rs") {
            let bytes = std::fs::read(&path).map_err(|e| fail(&path, e))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                fail(
                    &path,
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
                    ),
                )
            })?;
            out.push(SourceFile {
                path,
                relative: rel_path,
                text,
            });
        }
    }
    Ok(())
}

/// The fingerprint of `bytes`, as the runtime's `fresh::fingerprint` computes it at compile
/// time (where its definition is explained): FNV-1a's step over little-endian 8-byte words,
/// then over the last bytes, from the offset basis xored with the length.
pub(crate) fn fingerprint(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let step = |hash: u64, word: u64| (hash ^ word).wrapping_mul(PRIME);
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let seed = 0xcbf2_9ce4_8422_2325 ^ bytes.len() as u64;
    let hash = words.fold(seed, |hash, w| {
        step(
            hash,
            u64::from_le_bytes(w.try_into().expect("a chunk of 8")),
        )
    });
    tail.iter().fold(hash, |hash, b| step(hash, u64::from(*b)))
}

/// One input file as the tree checks it: its path from the output directory and its
/// fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    /// The path `include_bytes!` reads, relative to the generated `mod.rs`.
    pub(crate) from_output: String,
    /// The path relative to the input directory, as messages name it.
    pub(crate) relative: String,
    /// Its fingerprint.
    pub(crate) fingerprint: u64,
}

/// The inputs of `files`, read from the output directory through `input_from_output`
/// (`../apis`), sorted by path.
pub(crate) fn inputs(files: &[SourceFile], input_from_output: &str) -> Vec<Input> {
    let mut out: Vec<Input> = files
        .iter()
        .map(|f| {
            let relative = f
                .relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            Input {
                from_output: format!("{}/{relative}", input_from_output.trim_end_matches('/')),
                relative,
                fingerprint: fingerprint(f.text.as_bytes()),
            }
        })
        .collect();
    out.sort_by(|a, b| a.relative.cmp(&b.relative));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one loader of the project (`generate`, `crds`, `rbac`, `webhooks`) stops at a
    /// symbolic link back to a directory it has read, rather than looping.
    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_loop_is_an_error() {
        let root = std::env::temp_dir().join(format!("kube-codegen-loop-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(
            root.join("a/x.rs"),
            "// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=get\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/back")).unwrap();
        let err = load(&root).unwrap_err();
        std::fs::remove_dir_all(&root).unwrap();
        assert!(
            err.to_string()
                .contains("leads back to a directory already read"),
            "{err}"
        );
    }

    #[test]
    fn the_fingerprint_is_the_runtimes() {
        // The same figures as the runtime's `fresh` test: a word, a word and a tail, and a
        // tail alone.
        let vectors: [(&[u8], u64); 5] = [
            (b"", 0xcbf2_9ce4_8422_2325),
            (b"a", 0xaf63_dd4c_8601_ee3f),
            (b"foobar", 0xcae9_ac87_9a44_a592),
            (b"kubecode", 0xead6_15e3_c052_98f2),
            (b"kube-codegen", 0xc75d_3414_d747_ccb9),
        ];
        for (bytes, expected) in vectors {
            assert_eq!(fingerprint(bytes), expected, "{bytes:?}");
        }
    }
}
