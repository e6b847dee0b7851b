//! `create webhook` for admission: a kind's `src/webhooks/<kind>.rs` (its markers and typed
//! `Defaulter`/`Validator` examples) and test, wired into `src/webhooks/mod.rs`; the first
//! webhook of a crate also brings that module, the runtime's `webhook` feature and the
//! serving in `main.rs`.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::scaffold::Names;
use crate::scaffold::files::{
    NewFile, above, ensure_line, read, refuse_existing, write, write_files,
};
use crate::scaffold::templates::{self, sections};

/// The marker lines of `src/webhooks/mod.rs` that `create webhook` writes above: its
/// modules, and the webhooks `server()` serves.
const WEBHOOK_MODULES_MARKER: &str =
    "// kube-codegen create webhook: new webhook modules above this line.";
/// See [`WEBHOOK_MODULES_MARKER`].
pub(super) const WEBHOOK_SERVER_MARKER: &str =
    "    // kube-codegen create webhook: new webhooks above this line.";
/// The line of `main.rs` that the first webhook replaces with [`MAIN_WEBHOOKS`].
const MAIN_MARKER: &str = "    // kube-codegen create webhook: serving the webhooks goes here.";

/// What `main.rs` serves the webhooks with, in place of [`MAIN_MARKER`].
const MAIN_WEBHOOKS: &str = r#"    // The admission webhooks on WEBHOOK_ADDR, with the certificate in WEBHOOK_CERT_DIR (a
    // mounted Secret), else the operator's own (`webhooks::self_managed`); INSTALL_WEBHOOKS=1
    // installs the configurations (development). Shutting down then waits for them to stop and remove what they installed.
    let shutdown = match std::env::var("WEBHOOK_ADDR") {
        Err(_) => shutdown,
        Ok(addr) => {
            let options = __CRATE_IDENT__::webhooks::Options {
                addr: addr.parse().map_err(|e| format!("WEBHOOK_ADDR {addr}: {e}"))?,
                cert_dir: std::env::var("WEBHOOK_CERT_DIR").ok().map(Into::into),
                install: std::env::var("INSTALL_WEBHOOKS").is_ok_and(|v| v == "1"),
            };
            let serving = tokio::spawn(__CRATE_IDENT__::webhooks::serve(
                client.clone(),
                options,
                shutdown.clone(),
            ));
            async move {
                match serving.await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::error!(error = %e, "the webhooks stopped"),
                    Err(e) => tracing::error!(error = %e, "the webhooks stopped"),
                }
            }
            .boxed()
            .shared()
        }
    };"#;

/// The first webhook of a crate: `src/webhooks/mod.rs`, the runtime's `webhook` feature and
/// a YAML reader in `Cargo.toml`, and the serving in `main.rs`.
pub(super) fn add_webhooks_module(dir: &Path, names: &Names) -> Result<(), Error> {
    let main = dir.join("src/main.rs");
    let main_text = read(&main)?;
    if !main_text.contains(MAIN_MARKER) {
        return Err(Error::Refused(format!(
            "`{}` lacks the line create webhook replaces:\n{}\nput it back where the webhooks should start (after `shutdown` is made), or wire `webhooks::serve` by hand",
            main.display(),
            MAIN_MARKER.trim()
        )));
    }
    let manifest = dir.join("Cargo.toml");
    let cargo = read(&manifest)?;
    let Some(line) = cargo
        .lines()
        .find(|l| l.starts_with("kube-codegen-runtime = {") && l.ends_with('}'))
    else {
        return Err(Error::Refused(format!(
            "`{}` has no one-line `kube-codegen-runtime = {{ ... }}` dependency to add the `webhook` feature to; add `features = [\"webhook\"]` and `serde-saphyr = \"2\"` by hand",
            manifest.display()
        )));
    };
    let with_feature = format!(
        "{}, features = [\"webhook\"] }}\n# The webhook configurations are read from YAML in development mode.\nserde-saphyr = \"2\"",
        line.trim_end_matches('}').trim_end()
    );
    write(&manifest, &cargo.replacen(line, &with_feature, 1))?;
    write(
        &main,
        &main_text.replacen(MAIN_MARKER, &names.fill(MAIN_WEBHOOKS), 1),
    )?;
    ensure_line(&dir.join("src/lib.rs"), "pub mod webhooks;")?;
    crate::scaffold::deploy::add_webhooks(dir, names)?;
    write_files(
        dir,
        &[NewFile::new(
            "src/webhooks/mod.rs",
            names.fill(templates::WEBHOOKS_MOD),
        )],
    )
}

/// The admission webhooks of `create webhook` (the template `sections` in `keep`), before
/// regenerating.
pub(super) fn add_webhook(dir: &Path, names: &Names, keep: &[&str]) -> Result<(), Error> {
    let kind_file = dir
        .join(names.version_dir())
        .join(format!("{}.rs", names.kind_snake));
    if !kind_file.is_file() {
        return Err(Error::Refused(format!(
            "`{}` does not exist: add the kind first (`kube-codegen create api`)",
            kind_file.display()
        )));
    }
    // The test builds its objects from the kind's sample, not from spec fields it would
    // have to name (and that the user may have changed since `init`).
    let sample = names.sample_file();
    if !dir.join(&sample).is_file() {
        return Err(Error::Refused(format!(
            "`{}` does not exist: the webhook test builds its objects from the kind's sample; write one (a valid {}), then run again",
            dir.join(&sample).display(),
            names.kind
        )));
    }
    let sample_name = sample
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let files = [
        NewFile::new(
            PathBuf::from("src/webhooks").join(format!("{}.rs", names.kind_snake)),
            names.fill(&sections(templates::WEBHOOK_KIND, keep)),
        ),
        NewFile::new(
            PathBuf::from("tests").join(format!("{}_webhook.rs", names.kind_snake)),
            names
                .fill(&sections(templates::TEST_WEBHOOK, keep))
                .replace("__SAMPLE_FILE__", &sample_name),
        ),
    ];
    refuse_existing(dir, &files, "create webhook never overwrites your code")?;
    let module = dir.join("src/webhooks/mod.rs");
    if !module.exists() {
        add_webhooks_module(dir, names)?;
    }
    let text = read(&module)?;
    if !text.contains(WEBHOOK_MODULES_MARKER) || !text.contains(WEBHOOK_SERVER_MARKER) {
        return Err(Error::Refused(format!(
            "`{}` lacks the lines create webhook writes above:\n  {WEBHOOK_MODULES_MARKER}\n  {}\nput them back, or add the webhook by hand",
            module.display(),
            WEBHOOK_SERVER_MARKER.trim()
        )));
    }
    let text = above(
        &text,
        WEBHOOK_MODULES_MARKER,
        &format!("pub mod {};", names.kind_snake),
    );
    let text = above(
        &text,
        WEBHOOK_SERVER_MARKER,
        &format!("    let server = {}::register(server);", names.kind_snake),
    );
    write(&module, &text)?;
    write_files(dir, &files)
}
