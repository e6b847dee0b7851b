//! Writing and editing a crate's files for `init` and `create`: new files (never over
//! existing ones), lines added to modules and manifests, text inserted above marker lines.

use std::path::{Path, PathBuf};

use crate::error::{Error, Op};

/// A file to write into a crate.
#[derive(Debug, Clone)]
pub struct NewFile {
    /// Its path in the crate.
    pub path: PathBuf,
    /// Its contents.
    pub text: String,
    /// A script: written executable.
    pub executable: bool,
}

impl NewFile {
    /// A file (not executable) at `path` with `text`.
    pub fn new(path: impl Into<PathBuf>, text: String) -> Self {
        Self {
            path: path.into(),
            text,
            executable: false,
        }
    }
}

/// Refuses to go on when any of `files` exists under `dir`, saying `why`.
pub fn refuse_existing(dir: &Path, files: &[NewFile], why: &str) -> Result<(), Error> {
    match files.iter().find(|f| dir.join(&f.path).exists()) {
        Some(f) => Err(Error::Refused(format!(
            "`{}` exists: {why}",
            f.path.display()
        ))),
        None => Ok(()),
    }
}

/// Writes `files` under `dir`.
pub fn write_files(dir: &Path, files: &[NewFile]) -> Result<(), Error> {
    for file in files {
        let full = dir.join(&file.path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(Error::at(Op::Create, parent))?;
        }
        std::fs::write(&full, &file.text).map_err(Error::at(Op::Write, &full))?;
        if file.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o755))
                .map_err(Error::at(Op::MakeExecutable, &full))?;
        }
    }
    Ok(())
}

/// The text of the file at `path`.
pub fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(Error::at(Op::Read, path))
}

/// Replaces the file at `path` with `text`.
pub fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(Error::at(Op::Write, path))
}

/// Appends `line` to the file at `path` unless it has it.
pub fn ensure_line(path: &Path, line: &str) -> Result<(), Error> {
    let text = read(path)?;
    if text.lines().any(|l| l.trim() == line) {
        return Ok(());
    }
    let sep = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    write(path, &format!("{text}{sep}{line}\n"))
}

/// `text` with `line` inserted above `marker`.
pub fn above(text: &str, marker: &str, line: &str) -> String {
    text.replacen(marker, &format!("{line}\n{marker}"), 1)
}
