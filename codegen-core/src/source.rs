//! The input: every `.rs` file under the API directory, read in a stable order.

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

/// Reads every `.rs` file under `dir`, in a stable order, following symbolic links (a link
/// back to a directory already read is an error, not a loop).
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
    let dir = root.join(rel);
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
