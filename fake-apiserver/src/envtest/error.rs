//! What goes wrong starting or stopping a control plane.

/// Why a control plane could not start or stop.
#[derive(Debug)]
pub struct EnvtestError(pub(super) String);

impl std::fmt::Display for EnvtestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EnvtestError {}

impl EnvtestError {
    /// An error saying `message` (one remembered from an earlier attempt).
    pub fn from_message(message: String) -> Self {
        EnvtestError(message)
    }
}

pub(super) fn fail(what: impl std::fmt::Display, e: impl std::fmt::Display) -> EnvtestError {
    EnvtestError(format!("{what}: {e}"))
}
