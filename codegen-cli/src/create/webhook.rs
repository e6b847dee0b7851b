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
/// The line of `main.rs` that the first webhook replaces with [`MAIN_WEBHOOKS`] (with the
/// [`MAIN_PLACEHOLDER`] under it, if it is still there).
const MAIN_MARKER: &str = "    // kube-codegen create webhook: serving the webhooks goes here.\n";
/// What `init`'s `main.rs` has under [`MAIN_MARKER`] while there are no webhooks.
const MAIN_PLACEHOLDER: &str = r#"    if let Some(addr) = args.webhook_addr {
        let install = args.install_webhooks;
        tracing::warn!(%addr, install, "no webhooks yet: `kube-codegen create webhook` adds them");
    }
"#;

/// What `main.rs` serves the webhooks with, in place of [`MAIN_MARKER`].
const MAIN_WEBHOOKS: &str = r#"    // The webhooks on --webhook-addr, with the certificate in --cert-dir (a mounted Secret),
    // else the operator's own (`webhooks::self_managed`, rotated by the leader alone);
    // --install-webhooks installs the configurations (development). They run beside the
    // controllers and stop with them, putting back what they installed.
    if let Some(addr) = args.webhook_addr {
        let options = __CRATE_IDENT__::webhooks::Options {
            addr,
            cert_dir: args.cert_dir.clone(),
            install: args.install_webhooks,
            leading: Some(manager.leading()),
        };
        let serving = __CRATE_IDENT__::webhooks::serve(client.clone(), options, manager.stopping());
        manager.add_runnable("webhooks", serving);
    }
"#;

/// The line of `main.rs`'s embedded mode that the first webhook replaces with
/// [`EMBEDDED_WEBHOOKS`].
const EMBEDDED_MARKER: &str =
    "    // kube-codegen create webhook: the embedded API server calls the webhooks from here.\n";

/// `--embedded` serving the webhooks: in process, with a development certificate, installed
/// on the in-memory API server (which then calls them as kube-apiserver would) before the
/// sample is created.
const EMBEDDED_WEBHOOKS: &str = r#"    // The webhooks, in process with a development certificate, installed on the in-memory
    // API server, which calls them as a cluster would (admission and conversion).
    // The key in a directory of the process's own: a random name, owner-only, removed when
    // the webhooks stop.
    let cert_dir = kube_codegen_runtime::webhook::dev::PrivateDir::new("__CRATE__-embedded")?;
    let options = __CRATE_IDENT__::webhooks::Options {
        addr: ([127, 0, 0, 1], 0).into(),
        cert_dir: Some(cert_dir.path().to_owned()),
        install: true,
        leading: None,
    };
    let serving = __CRATE_IDENT__::webhooks::serve(client.clone(), options, shutdown.clone());
    let mut tasks = tasks;
    tasks.push(tokio::spawn(async move {
        let served = serving.await;
        drop(cert_dir);
        served
    }));
    let manifests = __CRATE_IDENT__::webhooks::MANIFESTS;
    let kinds = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];
    let wanted: usize = kinds
        .iter()
        .map(|k| manifests.matches(&format!("kind: {k}\n")).count())
        .sum();
    let installed = || -> usize {
        let list = |k: &&str| fake.list("admissionregistration.k8s.io/v1", k, None).len();
        kinds.iter().map(list).sum()
    };
    // The CRDs the webhooks convert: the sample is written once their conversion is
    // installed too, else it would be stored unconverted.
    let converting: Vec<String> = __CRATE_IDENT__::webhooks::server()
        .conversion_crds()
        .into_iter()
        .map(|(_, crd)| crd.to_owned())
        .collect();
    let converts = |name: &String| {
        let crds = fake.list("apiextensions.k8s.io/v1", "CustomResourceDefinition", None);
        crds.iter().any(|c| {
            c["metadata"]["name"] == name.as_str() && c["spec"]["conversion"]["strategy"] == "Webhook"
        })
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while installed() < wanted || !converting.iter().all(converts) {
        if std::time::Instant::now() > deadline {
            return Err("the webhooks were not installed on the embedded API server within 30 s".into());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    println!("the webhooks are served in process; the embedded API server calls them");
"#;

/// The first webhook of a crate: `src/webhooks/mod.rs`, the runtime's `webhook` feature and
/// a YAML reader in `Cargo.toml`, and the serving in `main.rs`.
pub(super) fn add_webhooks_module(dir: &Path, names: &Names) -> Result<(), Error> {
    let main = dir.join("src/main.rs");
    let main_text = read(&main)?;
    for (marker, place) in [
        (
            MAIN_MARKER,
            "where the webhooks should start (after the controllers are added to `manager`)",
        ),
        (EMBEDDED_MARKER, "in `embedded()`, after `tasks` is made"),
    ] {
        if !main_text.contains(marker) {
            return Err(Error::Refused(format!(
                "`{}` lacks the line create webhook replaces:\n{}\nput it back {place}, or wire `webhooks::serve` by hand",
                main.display(),
                marker.trim()
            )));
        }
    }
    let manifest = dir.join("Cargo.toml");
    let cargo = with_webhook_feature(&manifest, &read(&manifest)?)?;
    write(&manifest, &cargo)?;
    let placeholder = format!("{MAIN_MARKER}{MAIN_PLACEHOLDER}");
    let main_text = if main_text.contains(&placeholder) {
        main_text.replacen(&placeholder, &names.fill(MAIN_WEBHOOKS), 1)
    } else {
        main_text.replacen(MAIN_MARKER, &names.fill(MAIN_WEBHOOKS), 1)
    };
    let main_text = main_text.replacen(EMBEDDED_MARKER, &names.fill(EMBEDDED_WEBHOOKS), 1);
    write(&main, &main_text)?;
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

/// `manifest`'s text with the runtime's `webhook` feature and a YAML reader
/// (`serde-saphyr`, for the webhook configurations in development mode), edited as TOML:
/// whatever else the user wrote (other features, comments, order, a table instead of an
/// inline one) stays as it was, and what is already there is not added twice.
fn with_webhook_feature(manifest: &Path, text: &str) -> Result<String, Error> {
    let refuse = |why: String| {
        Error::Refused(format!(
            "`{}` {why}; add `features = [\"webhook\"]` to the `kube-codegen-runtime` dependency and `serde-saphyr = \"2\"` by hand",
            manifest.display()
        ))
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| refuse(format!("is not valid TOML ({e})")))?;
    let Some(deps) = doc
        .get_mut("dependencies")
        .and_then(toml_edit::Item::as_table_like_mut)
    else {
        return Err(refuse("has no [dependencies] table".into()));
    };
    let Some(runtime) = deps.get_mut("kube-codegen-runtime") else {
        return Err(refuse("has no `kube-codegen-runtime` dependency".into()));
    };
    // `kube-codegen-runtime = "0.1"` becomes a table so it can carry features.
    if let Some(version) = runtime.as_str().map(str::to_owned) {
        let mut table = toml_edit::InlineTable::new();
        table.insert("version", version.into());
        *runtime = toml_edit::value(table);
    }
    let Some(table) = runtime.as_table_like_mut() else {
        return Err(refuse(
            "has a `kube-codegen-runtime` dependency that is neither a version nor a table".into(),
        ));
    };
    let features = table
        .entry("features")
        .or_insert(toml_edit::value(toml_edit::Array::new()));
    let Some(features) = features.as_array_mut() else {
        return Err(refuse(
            "has `features` of `kube-codegen-runtime` that is not a list".into(),
        ));
    };
    if !features.iter().any(|f| f.as_str() == Some("webhook")) {
        features.push("webhook");
    }
    if !deps.contains_key("serde-saphyr") {
        deps.insert("serde-saphyr", toml_edit::value("2"));
        if let Some(mut key) = deps.key_mut("serde-saphyr") {
            key.leaf_decor_mut().set_prefix(
                "# The webhook configurations are read from YAML in development mode.\n",
            );
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_webhook_feature_joins_what_the_user_wrote() {
        let manifest = Path::new("Cargo.toml");
        let text = "[package]\nname = \"op\"\n\n[dependencies]\n# ours, with apps' apply configurations\nkube-codegen-runtime = { version = \"0.1\", default-features = false, features = [\"ac-apps\"] }\nkube = \"5\"\n";
        let edited = with_webhook_feature(manifest, text).unwrap();
        assert!(
            edited.contains("# ours, with apps' apply configurations\nkube-codegen-runtime = { version = \"0.1\", default-features = false, features = [\"ac-apps\", \"webhook\"] }\n"),
            "{edited}"
        );
        assert!(edited.contains("\nserde-saphyr = \"2\"\n"), "{edited}");
        assert_eq!(edited.matches("features = [").count(), 1, "{edited}");
        // Twice is once.
        assert_eq!(with_webhook_feature(manifest, &edited).unwrap(), edited);
        // A bare version, and a table of its own.
        let bare =
            with_webhook_feature(manifest, "[dependencies]\nkube-codegen-runtime = \"0.1\"\n")
                .unwrap();
        assert!(
            bare.contains("kube-codegen-runtime = { version = \"0.1\", features = [\"webhook\"] }"),
            "{bare}"
        );
        let table = with_webhook_feature(
            manifest,
            "[dependencies]\nserde-saphyr = \"2\"\n\n[dependencies.kube-codegen-runtime]\nversion = \"0.1\"\nfeatures = [\"ac-core\"]\n",
        )
        .unwrap();
        assert!(
            table.contains("features = [\"ac-core\", \"webhook\"]"),
            "{table}"
        );
        assert_eq!(table.matches("serde-saphyr").count(), 1, "{table}");
        for bad in [
            "[dependencies]\nkube = \"5\"\n",
            "not toml = = =",
            "[dependencies]\nkube-codegen-runtime = { features = \"webhook\" }\n",
        ] {
            let err = with_webhook_feature(manifest, bad).unwrap_err().to_string();
            assert!(err.contains("by hand"), "{err}");
        }
    }
}
