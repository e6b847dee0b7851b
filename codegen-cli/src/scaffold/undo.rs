//! Putting a crate back when `init` or `create` fails: `init` empties (or removes) the
//! directory it wrote into; `create` takes a [`snapshot`] of the crate first and
//! [`restore`]s it.

use std::path::{Path, PathBuf};

/// Every file of the crate but `target/` and `.git/`, with its bytes (`None` when it
/// cannot be read: it is then left as it is): what a failed `create` puts back.
pub type Snapshot = Vec<(PathBuf, Option<Vec<u8>>)>;

/// The files and directories under `dir`, but `target/` and `.git/` at its top; symbolic
/// links are followed, each directory read once (a link back to one already read is not
/// followed again, so a loop ends).
fn walk(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    let mut seen = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(canonical) = d.canonicalize() {
            if seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if d == dir && (name == "target" || name == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path.clone());
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    (files, dirs)
}

/// The crate's files as they are now.
pub fn snapshot(dir: &Path) -> Snapshot {
    walk(dir)
        .0
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).ok();
            (path, bytes)
        })
        .collect()
}

/// Puts the crate back as `before` had it: files restored, files and directories it did not
/// have removed.
pub fn restore(dir: &Path, before: &Snapshot) {
    let (files, dirs) = walk(dir);
    for path in files {
        if !before.iter().any(|(p, _)| *p == path) {
            let _ = std::fs::remove_file(&path);
        }
    }
    for (path, bytes) in before {
        let Some(bytes) = bytes else { continue };
        if std::fs::read(path).ok().as_deref() != Some(bytes.as_slice()) {
            let _ = std::fs::write(path, bytes);
        }
    }
    // Directories left empty by the removals (deepest first: each was found after its parent).
    for d in dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Removes what `init` wrote: the directory itself when `init` `created` it, else
/// everything in it (it was empty).
pub fn clear(dir: &Path, created: bool) {
    if created {
        let _ = std::fs::remove_dir_all(dir);
    } else if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}
