//! Scratch directories of this process's own: created under the system's temporary
//! directory with a random name (`<prefix>-<32 hex digits>`), owner-only on Unix, never one
//! that existed before (so nobody on a shared machine can have planted links in it), and
//! removed with what they hold when dropped.

use std::path::{Path, PathBuf};

/// One scratch directory.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Creates one named after `prefix`.
    pub fn new(prefix: &str) -> std::io::Result<Self> {
        let mut bytes = [0u8; 16];
        let random = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
        if random.is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
        }
        let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let path = std::env::temp_dir().join(format!("{prefix}-{name}"));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)?;
        Ok(Self { path })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_is_new_private_and_removed() {
        let a = Scratch::new("kube-codegen-test").unwrap();
        let b = Scratch::new("kube-codegen-test").unwrap();
        assert_ne!(a.path(), b.path());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(a.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let path = a.path().to_owned();
        std::fs::write(path.join("f"), "x").unwrap();
        drop(a);
        assert!(!path.exists());
    }
}
