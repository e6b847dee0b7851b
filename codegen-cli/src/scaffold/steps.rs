//! What `hack/update-codegen.sh` does, run in process on a crate `init` or `create` wrote:
//! the typed clients, the RBAC, the webhook configurations (once the crate has webhooks), the
//! CRDs and their API reference pages, and the Helm chart rendered from `config/default`
//! (where kubectl is installed). Each step's outcome is printed as it completes; a failed step
//! is an error naming it, with its cause.

use std::path::Path;

use super::Names;
use crate::error::{Error, Outcome};
use crate::{chart, crds, docs, generate, rbac, webhooks};

/// Runs every step on the crate in `dir`; `command` (`init`, `create api`) names the command
/// they run for in an error.
pub fn regenerate(dir: &Path, names: &Names, command: &'static str) -> Result<(), Error> {
    let step = |what: &'static str, result: Result<Outcome, Error>| match result {
        Ok(outcome) => {
            eprintln!("{outcome}");
            Ok(())
        }
        Err(cause) => Err(cause.in_step(command, what)),
    };
    step(
        "generating the typed clients",
        generate::run(&generate::Options {
            input: dir.join("src/apis"),
            output: dir.join("src/generated"),
            api_module: generate::API_MODULE.to_owned(),
            verify: false,
        }),
    )?;
    step(
        "writing the RBAC",
        rbac::run(&rbac::Options {
            input: dir.join("src"),
            output: dir.join("config/rbac/role.yaml"),
            name: names.krate.clone(),
            namespace: format!("{}-system", names.krate),
            verify: false,
        }),
    )?;
    if dir.join("src/webhooks").is_dir() {
        step(
            "writing the webhook configurations",
            webhooks::run(&webhooks::Options {
                input: dir.join("src"),
                output: dir.join("config/webhook"),
                cert_manager_certificate: None,
                verify: false,
            }),
        )?;
    }
    let mut crds = crds::Options::new(dir.join("src/apis"), dir.join("config/crd"));
    // Once the crate converts, its CRDs point at the conversion webhook, in the kustomize
    // base config/default deploys (config/crd itself names no Service).
    crds.conversion_service = dir
        .join("src/generated/conversion.rs")
        .is_file()
        .then(|| names.webhook_service());
    crds.kustomize = Some(dir.join("config/crd-conversion"));
    step("building the CRD", crds::run(&crds))?;
    step(
        "writing the API reference",
        docs::run(&docs::Options {
            input: dir.join("src/apis"),
            output: dir.join("docs/api"),
            format: docs::Format::Both,
            verify: false,
        }),
    )?;
    let chart = chart::run(&chart::Options {
        config: dir.join("config/default"),
        output: dir.join("charts").join(&names.krate),
        name: names.krate.clone(),
        namespace: format!("{}-system", names.krate),
        verify: false,
    });
    match chart {
        Err(Error::Spawn { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "kube-codegen: kubectl not found: charts/{} not written (hack/update-codegen.sh writes it where kubectl is installed)",
                names.krate
            );
            Ok(())
        }
        chart => step("rendering the Helm chart", chart),
    }
}
