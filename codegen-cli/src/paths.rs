//! The paths written into headers and messages: relative to a stable root, whatever the
//! working directory and however they were typed (`./apis/`, an absolute path), so that
//! `verify` gives the same verdict from anywhere.
//!
//! The root is the outermost directory above the output whose `Cargo.toml` has a
//! `[workspace]`, else the nearest one with a `Cargo.toml`; without any, the working
//! directory.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute and cleaned of `.` and `..`, without needing it to exist.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    // Resolve symbolic links as far as the path exists.
    let mut existing = joined.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name(), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_owned());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = existing.canonicalize().unwrap_or(existing);
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    let mut clean = PathBuf::new();
    for c in out.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    clean
}

/// The directory header paths are relative to, for files written under `output`.
pub fn root(output: &Path) -> PathBuf {
    let out = absolute(output);
    let manifests: Vec<PathBuf> = out
        .ancestors()
        .filter(|d| d.join("Cargo.toml").is_file())
        .map(Path::to_path_buf)
        .collect();
    let workspace = manifests.iter().rev().find(|d| {
        std::fs::read_to_string(d.join("Cargo.toml"))
            .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
    });
    workspace
        .or(manifests.first())
        .cloned()
        .unwrap_or_else(|| absolute(Path::new(".")))
}

/// `path` as written in a header: relative to `root` when it is below it, with `/`.
pub fn shown(path: &Path, root: &Path) -> String {
    let abs = absolute(path);
    let rel = abs.strip_prefix(root).map(Path::to_path_buf).unwrap_or(abs);
    // Outside the root the path stays absolute: `/` once, then its names.
    let absolute = rel.has_root();
    let names = rel
        .components()
        .filter(|c| !matches!(c, std::path::Component::RootDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    let text = if absolute { format!("/{names}") } else { names };
    if text.is_empty() {
        ".".to_owned()
    } else {
        text
    }
}

/// `to` as a relative path from the directory `from` (`../apis` from `src/generated` to
/// `src/apis`), with `/`.
pub fn relative(from: &Path, to: &Path) -> String {
    let (from, to) = (absolute(from), absolute(to));
    let from: Vec<Component<'_>> = from.components().collect();
    let to: Vec<Component<'_>> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let ups = std::iter::repeat_n("..".to_owned(), from.len() - common);
    let downs = to[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    let path = ups.chain(downs).collect::<Vec<_>>().join("/");
    if path.is_empty() {
        ".".to_owned()
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_go_up_then_down() {
        let root = absolute(Path::new("/r"));
        assert_eq!(
            relative(&root.join("src/generated"), &root.join("src/apis")),
            "../apis"
        );
        assert_eq!(relative(&root.join("gen"), &root.join("a/b")), "../a/b");
        assert_eq!(relative(&root.join("x"), &root.join("x")), ".");
    }

    #[test]
    fn paths_outside_the_root_are_absolute_with_one_slash() {
        let root = absolute(Path::new("."));
        assert_eq!(shown(Path::new("/tmp/crds"), &root), "/tmp/crds");
    }

    #[test]
    fn spellings_of_one_path_show_the_same() {
        let root = absolute(Path::new("."));
        let forms = ["apis", "./apis", "apis/", "./apis/./", "x/../apis"];
        for f in forms {
            assert_eq!(shown(Path::new(f), &root), "apis", "{f}");
        }
        assert_eq!(shown(&root.join("apis"), &root), "apis");
    }
}
