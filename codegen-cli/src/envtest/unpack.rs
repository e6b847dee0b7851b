//! Unpacking an archive into place, all or nothing: its regular files, flattened to their
//! names (`controller-tools/envtest/etcd` becomes `etcd`), go into a staging directory next
//! to the target, which is then renamed into place; every failure removes what was made,
//! the directories created for it included.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Directories this install created, removed (deepest first) unless it succeeds.
struct Made {
    dirs: Vec<PathBuf>,
    staging: Option<PathBuf>,
    done: bool,
}

impl Drop for Made {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Some(staging) = &self.staging {
            let _ = std::fs::remove_dir_all(staging);
        }
        for dir in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The most one file of an archive may be once unpacked.
const MAX_FILE: u64 = 1 << 30;

/// Unpacks the gzipped tar `bytes` into `target` (replacing what is there); the names of
/// the files written.
pub fn install(bytes: &[u8], target: &Path) -> Result<Vec<String>, String> {
    use std::os::unix::fs::PermissionsExt;
    let parent = target
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", target.display()))?;
    let leaf = target
        .file_name()
        .ok_or_else(|| format!("{} has no name", target.display()))?
        .to_string_lossy()
        .into_owned();
    let mut made = Made {
        dirs: Vec::new(),
        staging: None,
        done: false,
    };
    let mut missing: Vec<PathBuf> = parent
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    for dir in missing {
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        made.dirs.push(dir);
    }
    let staging = parent.join(format!(".{leaf}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir(&staging).map_err(|e| format!("creating {}: {e}", staging.display()))?;
    made.staging = Some(staging.clone());

    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut names = Vec::new();
    let entries = archive.entries().map_err(|e| e.to_string())?;
    for entry in entries {
        let mut entry = entry.map_err(|e| e.to_string())?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if name.starts_with('.') || names.contains(&name) {
            return Err(format!(
                "the archive holds {} twice or hidden",
                path.display()
            ));
        }
        let file = staging.join(&name);
        let mut out =
            std::fs::File::create(&file).map_err(|e| format!("writing {}: {e}", file.display()))?;
        let copied = std::io::copy(&mut (&mut entry).take(MAX_FILE + 1), &mut out)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if copied > MAX_FILE {
            return Err(format!("{} is larger than 1 GiB", path.display()));
        }
        out.sync_all()
            .map_err(|e| format!("writing {}: {e}", file.display()))?;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("making {} executable: {e}", file.display()))?;
        names.push(name);
    }
    for needed in ["etcd", "kube-apiserver"] {
        if !names.iter().any(|n| n == needed) {
            return Err(format!("the archive has no {needed}"));
        }
    }
    // Into place; what was there (a `--force` fetch) goes only once the new one is in.
    let old = parent.join(format!(".{leaf}.old-{}", std::process::id()));
    let replacing = target.exists();
    if replacing {
        std::fs::rename(target, &old)
            .map_err(|e| format!("moving {} aside: {e}", target.display()))?;
    }
    if let Err(e) = std::fs::rename(&staging, target) {
        if replacing {
            let _ = std::fs::rename(&old, target);
        }
        // Another fetch of the same version put it in place first: it is installed.
        if !replacing
            && ["etcd", "kube-apiserver"]
                .iter()
                .all(|b| target.join(b).is_file())
        {
            let _ = std::fs::remove_dir_all(&staging);
            made.done = true;
            names.sort();
            return Ok(names);
        }
        return Err(format!("moving {} into place: {e}", target.display()));
    }
    made.done = true;
    if replacing {
        let _ = std::fs::remove_dir_all(&old);
    }
    names.sort();
    Ok(names)
}
