//! `kube-codegen init` as a new user runs it: a crate outside this workspace that passes
//! its own `cargo test`, `hack/verify-codegen.sh` and `kube-codegen lint` at once, and again after `create api`
//! adds a cluster-scoped kind in another group (the same kind again is refused), after
//! `create webhook` adds the first kind's admission webhooks, and after `create api` adds a
//! second version of a kind (a copy of the first as the user edited it) and `create webhook
//! --conversion` converts between them; a spec field renamed without regenerating fails the
//! build with the command to run; regenerating after adding one builds again; arguments it refuses leave nothing behind; a second `init`
//! into the crate is refused.
//!
//! The crate depends on this checkout by path and shares this workspace's target directory
//! and lock file, so only the crate itself, its CRD runner and its test are compiled.

mod support;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use support::{TempDir, repo, stderr, target_dir, write};

fn init(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(cwd)
        .env("CARGO_TARGET_DIR", target_dir())
        .arg("init")
        .args(args)
        .args(["--kube-codegen-path", repo().to_str().unwrap()])
        .output()
        .unwrap()
}

/// `kube-codegen create <what> args` in the crate.
fn create(dir: &Path, what: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .args(["create", what])
        .args(args)
        .output()
        .unwrap()
}

/// Runs `program` in the crate as its user would, with this build's target directory and
/// kube-codegen.
fn in_crate(dir: &Path, program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .current_dir(dir)
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("KUBE_CODEGEN", env!("CARGO_BIN_EXE_kube-codegen"))
        .output()
        .unwrap()
}

/// `kube-codegen lint` over the crate's API types, as its CI script runs it: clean.
fn lints_clean(dir: &Path) {
    let lint = in_crate(
        dir,
        env!("CARGO_BIN_EXE_kube-codegen"),
        &["lint", "--input", "src/apis"],
    );
    assert!(lint.status.success(), "lint:\n{}", stderr(&lint));
}

#[test]
fn a_new_operator_crate_passes_its_own_tests_and_checks_at_once() {
    let tmp = TempDir::new("init");
    let out = init(
        &tmp.0,
        &[
            "backup-operator",
            "--group",
            "backup.example.com",
            "--version",
            "v1alpha1",
            "--kind",
            "Backup",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = tmp.0.join("backup-operator");
    for file in [
        "Cargo.toml",
        "README.md",
        "Dockerfile",
        ".ci/run",
        "hack/update-codegen.sh",
        "hack/verify-codegen.sh",
        "hack/verify-compat.sh",
        "src/main.rs",
        "src/controllers/backup.rs",
        "src/apis/backup/v1alpha1/backup.rs",
        "src/generated/mod.rs",
        "src/generated/backup/v1alpha1/applyconfigurations/backup.rs",
        "config/crd/backup.example.com_backups.yaml",
        "config/rbac/role.yaml",
        "config/manager/deployment.yaml",
        "config/samples/backup_v1alpha1_backup.yaml",
        "config/grafana/controller-runtime-metrics.json",
        "config/crd/Kustomization",
        "config/crd-conversion/Kustomization",
        "config/rbac/Kustomization",
        "config/manager/Kustomization",
        "config/default/kustomization.yaml",
        "tests/backup.rs",
    ] {
        assert!(dir.join(file).is_file(), "{file} written");
    }
    let ci = fs::read_to_string(dir.join(".ci/run")).unwrap();
    assert!(ci.contains("\" lint --input src/apis"), "{ci}");
    let crd = fs::read_to_string(dir.join("config/crd/backup.example.com_backups.yaml")).unwrap();
    assert!(crd.contains("x-kubernetes-list-map-keys:\n"), "{crd}");
    let role = fs::read_to_string(dir.join("config/rbac/role.yaml")).unwrap();
    assert!(role.contains("resources: [\"backups/status\"]"), "{role}");

    let test = in_crate(&dir, "cargo", &["test", "--quiet"]);
    assert!(
        test.status.success(),
        "cargo test in the new crate:\n{}{}",
        String::from_utf8_lossy(&test.stdout),
        stderr(&test)
    );
    assert!(
        String::from_utf8_lossy(&test.stdout).contains("1 passed"),
        "{}",
        String::from_utf8_lossy(&test.stdout)
    );
    let verify = in_crate(&dir, "hack/verify-codegen.sh", &[]);
    assert!(verify.status.success(), "verify:\n{}", stderr(&verify));
    missing_rbac_marker_is_a_403(&dir);
    lints_clean(&dir);
    consumed_api(&dir);
    owner_with_children(&dir);

    // A second kind, cluster-scoped, in another group: both green.
    let restore = [
        "--group",
        "restore.example.com",
        "--version",
        "v1",
        "--kind",
        "RestoreJob",
    ];
    let created = create(&dir, "api", &[&restore[..], &["--cluster"]].concat());
    assert!(created.status.success(), "{}", stderr(&created));
    let controllers = fs::read_to_string(dir.join("src/controllers/mod.rs")).unwrap();
    assert!(
        controllers.contains("pub mod restore_job;")
            && controllers.contains("restore_job::add(manager, client, options);"),
        "{controllers}"
    );
    let test = in_crate(&dir, "cargo", &["test", "--quiet"]);
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{out}{}", stderr(&test));
    // The two kinds' tests, and the consumed VolumeSnapshot's.
    assert_eq!(out.matches("1 passed").count(), 3, "{out}");
    let verify = in_crate(&dir, "hack/verify-codegen.sh", &[]);
    assert!(verify.status.success(), "verify:\n{}", stderr(&verify));
    assert!(
        dir.join("config/crd/restore.example.com_restorejobs.yaml")
            .is_file()
    );
    // The user makes the kind theirs: a field renamed, a required one added (the sample
    // and the controller's test follow). What create writes from here on must still build.
    let v1_path = dir.join("src/apis/restore/v1/restore_job.rs");
    let edited = fs::read_to_string(&v1_path).unwrap().replace(
        "    pub description: Option<String>,\n",
        "    pub note: Option<String>,\n    /// When to run.\n    ///\n    /// +required\n    /// +kubebuilder:validation:MaxLength=64\n    /// +kubebuilder:validation:Pattern=`^(hourly|daily|weekly)( at [0-2][0-9]:[0-5][0-9])?$`\n    pub schedule: String,\n    /// How much to keep.\n    ///\n    /// +optional\n    pub keep: Option<k8s_openapi::apimachinery::pkg::api::resource::Quantity>,\n",
    );
    fs::write(&v1_path, edited).unwrap();
    let sample_path = dir.join("config/samples/restore_v1_restore_job.yaml");
    let sample = fs::read_to_string(&sample_path).unwrap();
    fs::write(
        &sample_path,
        sample.replace("description: a sample RestoreJob", "schedule: daily"),
    )
    .unwrap();
    let test_path = dir.join("tests/restore_job.rs");
    let test_text = fs::read_to_string(&test_path).unwrap();
    fs::write(
        &test_path,
        test_text.replace(
            "description: None,",
            "note: None,\n        schedule: \"daily\".into(),",
        ),
    )
    .unwrap();
    let update = in_crate(&dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
    let crd =
        fs::read_to_string(dir.join("config/crd/restore.example.com_restorejobs.yaml")).unwrap();
    assert!(
        crd.contains(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)"),
        "a Quantity gets the quantity pattern: {crd}"
    );

    // The same kind again is refused, and nothing changes.
    let again = create(&dir, "api", &restore);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("never overwrites your code"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        fs::read_to_string(dir.join("src/controllers/mod.rs")).unwrap(),
        controllers
    );

    // The first kind's admission webhooks: served in the crate's test through the fake.
    let backup = [
        "--group",
        "backup.example.com",
        "--version",
        "v1alpha1",
        "--kind",
        "Backup",
    ];
    // The runtime dependency already has features, with a comment above it, as the apply
    // how-to has users write: create webhook adds its own to them, keeping both.
    let manifest = dir.join("Cargo.toml");
    let cargo = fs::read_to_string(&manifest).unwrap();
    let runtime_line = cargo
        .lines()
        .find(|l| l.starts_with("kube-codegen-runtime = {"))
        .unwrap()
        .to_owned();
    let with_features = runtime_line.replace(" }", ", features = [\"ac-core\"] }");
    fs::write(
        &manifest,
        cargo.replace(
            &runtime_line,
            &format!("# core/v1 apply configurations for my events\n{with_features}"),
        ),
    )
    .unwrap();
    let webhook = create(&dir, "webhook", &backup);
    assert!(webhook.status.success(), "{}", stderr(&webhook));
    let cargo = fs::read_to_string(&manifest).unwrap();
    assert!(
        cargo.contains("# core/v1 apply configurations for my events\nkube-codegen-runtime = {")
            && cargo.contains("features = [\"ac-core\", \"webhook\"] }")
            && cargo.matches("serde-saphyr").count() == 1,
        "{cargo}"
    );
    let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(main.contains("webhooks::serve("), "{main}");
    let test = in_crate(
        &dir,
        "cargo",
        &["test", "--quiet", "--test", "backup_webhook"],
    );
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{out}{}", stderr(&test));
    assert!(out.contains("1 passed"), "{out}");
    let verify = in_crate(&dir, "hack/verify-codegen.sh", &[]);
    assert!(verify.status.success(), "verify:\n{}", stderr(&verify));
    flags_and_embedded_webhooks(&dir);
    // A second kind's defaulting webhook alone joins the same configuration.
    let second = create(&dir, "webhook", &[&restore[..], &["--defaulting"]].concat());
    assert!(second.status.success(), "{}", stderr(&second));
    let test = in_crate(
        &dir,
        "cargo",
        &["test", "--quiet", "--test", "restore_job_webhook"],
    );
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{out}{}", stderr(&test));
    let manifests = fs::read_to_string(dir.join("config/webhook/manifests.yaml")).unwrap();
    assert_eq!(
        manifests
            .matches("kind: MutatingWebhookConfiguration")
            .count(),
        1,
        "{manifests}"
    );
    assert!(
        manifests.contains("name: mbackup.backup.example.com")
            && manifests.contains("name: mrestorejob.restore.example.com")
            && !manifests.contains("name: vrestorejob"),
        "{manifests}"
    );
    let hooks = fs::read_to_string(dir.join("src/webhooks/restore_job.rs")).unwrap();
    assert!(!hooks.contains("impl Validator"), "{hooks}");

    // A conversion needs a second version; a second version of a kind is its type alone,
    // the first stays the storage version; the hub of a conversion must be that version.
    let restore_v2 = [
        "--group",
        "restore.example.com",
        "--version",
        "v2",
        "--kind",
        "RestoreJob",
    ];
    let one = create(&dir, "webhook", &[&restore[..], &["--conversion"]].concat());
    assert_eq!(one.status.code(), Some(1));
    assert!(
        stderr(&one).contains("RestoreJob has one version, v1: a conversion needs a second"),
        "{}",
        stderr(&one)
    );
    let controllers = fs::read_to_string(dir.join("src/controllers/mod.rs")).unwrap();
    let v2 = create(&dir, "api", &restore_v2);
    assert!(v2.status.success(), "{}", stderr(&v2));
    assert_eq!(
        fs::read_to_string(dir.join("src/controllers/mod.rs")).unwrap(),
        controllers,
        "no second controller"
    );
    let v1_file = fs::read_to_string(dir.join("src/apis/restore/v1/restore_job.rs")).unwrap();
    assert!(
        v1_file.contains("/// +kubebuilder:storageversion\n#[derive("),
        "{v1_file}"
    );
    // The version's module re-exports the types the copied file declares, read from it.
    let v2_mod = fs::read_to_string(dir.join("src/apis/restore/v2/mod.rs")).unwrap();
    assert!(
        v2_mod.contains("pub use restore_job::{RestoreJob, RestoreJobSpec, RestoreJobStatus};"),
        "{v2_mod}"
    );
    // v2 starts from v1 as the user left it, without the marker of the storage version.
    let v2_first = fs::read_to_string(dir.join("src/apis/restore/v2/restore_job.rs")).unwrap();
    assert!(
        v2_first.contains("pub schedule: String,")
            && v2_first.contains("version = \"v2\"")
            && !v2_first.contains("storageversion"),
        "{v2_first}"
    );
    let v2_sample =
        fs::read_to_string(dir.join("config/samples/restore_v2_restore_job.yaml")).unwrap();
    assert!(
        v2_sample.contains("apiVersion: restore.example.com/v2")
            && v2_sample.contains("schedule: daily"),
        "{v2_sample}"
    );
    let spoke_hub = create(
        &dir,
        "webhook",
        &[&restore_v2[..], &["--conversion"]].concat(),
    );
    assert_eq!(spoke_hub.status.code(), Some(1));
    assert!(
        stderr(&spoke_hub).contains(
            "RestoreJob stores v1 (`+kubebuilder:storageversion`): run with `--version v1`"
        ),
        "{}",
        stderr(&spoke_hub)
    );
    let conversion = create(&dir, "webhook", &[&restore[..], &["--conversion"]].concat());
    assert!(conversion.status.success(), "{}", stderr(&conversion));
    assert!(
        dir.join("src/apis/restore/v2/restore_job_conversion.rs")
            .is_file()
    );
    let script = fs::read_to_string(dir.join("hack/update-codegen.sh")).unwrap();
    assert!(
        script.contains("--conversion-service backup-operator-system/backup-operator-webhook"),
        "{script}"
    );
    // The CA is injected into this CRD alone: the ClusterRole names it.
    let webhooks = fs::read_to_string(dir.join("src/webhooks/mod.rs")).unwrap();
    assert!(
        webhooks.contains("resources=customresourcedefinitions,verbs=get;patch,resourceNames=restorejobs.restore.example.com\n"),
        "{webhooks}"
    );
    // Served in the crate's test: the sample round-trips, and the fake reads every version
    // through the webhook.
    let test = in_crate(
        &dir,
        "cargo",
        &["test", "--quiet", "--test", "restore_job_conversion"],
    );
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{out}{}", stderr(&test));
    assert!(out.contains("2 passed"), "{out}");
    // The generated round trip draws objects of both versions from the CRD: `schedule` and
    // the Quantity `keep` get strings their patterns accept.
    let round_trip = in_crate(
        &dir,
        "cargo",
        &["test", "--quiet", "--lib", "conversions_round_trip"],
    );
    let out = String::from_utf8_lossy(&round_trip.stdout);
    assert!(round_trip.status.success(), "{out}{}", stderr(&round_trip));
    assert!(out.contains("1 passed"), "{out}");
    let verify = in_crate(&dir, "hack/verify-codegen.sh", &[]);
    assert!(verify.status.success(), "verify:\n{}", stderr(&verify));
    lints_clean(&dir);
    // Once v2's fields differ, the CRD's conversion goes through the webhook Service.
    let v2_file = dir.join("src/apis/restore/v2/restore_job.rs");
    let v2_text = fs::read_to_string(&v2_file).unwrap();
    fs::write(
        &v2_file,
        v2_text.replace(
            "    pub note: Option<String>,\n",
            "    pub note: Option<String>,\n    /// +optional\n    pub paused: Option<bool>,\n",
        ),
    )
    .unwrap();
    let update = in_crate(&dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
    // config/crd itself never names the Service: applying it never points at a missing webhook.
    let crd =
        fs::read_to_string(dir.join("config/crd/restore.example.com_restorejobs.yaml")).unwrap();
    assert!(!crd.contains("conversion:"), "{crd}");
    let role = fs::read_to_string(dir.join("config/rbac/role.yaml")).unwrap();
    let crd_rules: Vec<&str> = role
        .split("\n- ")
        .filter(|rule| rule.contains("customresourcedefinitions"))
        .collect();
    assert!(
        crd_rules.len() == 1 && crd_rules[0].contains("restorejobs.restore.example.com"),
        "CRDs only by name: {role}"
    );
    let conversion = fs::read_to_string(dir.join("config/crd-conversion/Kustomization")).unwrap();
    assert!(
        conversion.contains("strategy: Webhook")
            && conversion.contains("path: /convert-restore-example-com-restorejob")
            && conversion.contains("name: backup-operator-webhook"),
        "{conversion}"
    );
    deployable_as_generated(&dir);

    // Renaming a spec field without regenerating fails the build, naming the command.
    let kind_file = dir.join("src/apis/backup/v1alpha1/backup.rs");
    let original = fs::read_to_string(&kind_file).unwrap();
    fs::write(
        &kind_file,
        original.replace(
            "pub description: Option<String>",
            "pub note: Option<String>",
        ),
    )
    .unwrap();
    let build = in_crate(&dir, "cargo", &["build", "--quiet", "--lib"]);
    assert!(!build.status.success());
    assert!(
        stderr(&build).contains(
            "generated code is stale: `backup/v1alpha1/backup.rs` changed since it was generated; run `hack/update-codegen.sh` (it regenerates the CRDs too), or for this tree alone `kube-codegen generate --input src/apis --output src/generated`"
        ),
        "{}",
        stderr(&build)
    );
    // An added field, regenerated: the library builds again.
    fs::write(
        &kind_file,
        original.replace(
            "    pub description: Option<String>,\n",
            "    pub description: Option<String>,\n    /// +optional\n    pub schedule: Option<String>,\n",
        ),
    )
    .unwrap();
    let update = in_crate(&dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
    // (The library: main.rs and the test construct the spec with every field.)
    let build = in_crate(&dir, "cargo", &["build", "--quiet", "--lib"]);
    assert!(build.status.success(), "{}", stderr(&build));
    let crd = fs::read_to_string(dir.join("config/crd/backup.example.com_backups.yaml")).unwrap();
    assert!(crd.contains("schedule:"), "{crd}");

    // A second init into the crate is refused, and changes nothing.
    let before = fs::read_to_string(dir.join("src/controllers/backup.rs")).unwrap();
    let again = init(
        &tmp.0,
        &[
            "backup-operator",
            "--group",
            "x.example.com",
            "--version",
            "v1",
            "--kind",
            "X",
        ],
    );
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("exists and is not an empty directory"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        fs::read_to_string(dir.join("src/controllers/backup.rs")).unwrap(),
        before
    );
}

/// The CSI snapshotter's VolumeSnapshot CRD imported as an API the operator consumes: the
/// crate gets its client (a test in the crate creates and reads one on the fake, with the
/// CRD installed from the snapshotter's own manifest), and nothing of it reaches the
/// crate's CRDs, kustomizations, chart, `crds()`, API pages or lint.
/// The crate's reconcile under a controller that owns ConfigMaps: a Backup with a child is
/// reconciled, then deleted (the child goes by garbage collection, its events map to the
/// deleted owner); no reconcile counts as an error.
fn owner_with_children(dir: &Path) {
    let test = r#"//! Deleting an owner with children is no reconcile error.

use std::sync::Arc;
use std::time::Duration;

use backup_operator::apis::backup::v1alpha1::{Backup, BackupSpec};
use backup_operator::controllers::backup::{Context, reconcile};
use backup_operator::generated::Clientset;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;
use kube::api::{Api, DeleteParams, PostParams};
use kube_codegen_runtime::controller::Controller;
use kube_codegen_runtime::events::{Recorder, Reporter};
use kube_codegen_runtime::manager::{Manager, ManagerOptions};
use kube_codegen_runtime::{FieldManager, ReadYourWrites, SharedInformerFactory};

#[tokio::test]
async fn deleting_an_owner_with_children_is_no_error() {
    let fake = fake_apiserver::FakeApiServer::new();
    for crd in backup_operator::generated::crds().unwrap() {
        fake.seed(crd).unwrap();
    }
    let client = kube::Client::new(fake.clone(), "default");
    let factory = SharedInformerFactory::new(client.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut manager = Manager::new(client.clone(), factory.clone(), ManagerOptions::default(), async move {
        let _ = stopped.await;
    });
    let ctx = Arc::new(Context {
        clients: Clientset::new(client.clone(), FieldManager::new("test").force()),
        recorder: Recorder::new(client.clone(), Reporter { controller: "test".into(), instance: None }),
        writes: ReadYourWrites::new(),
    });
    let controller = Controller::new("backup", factory.informer::<Backup>())
        .owns(factory.informer::<ConfigMap>());
    manager.add(controller, reconcile, ctx);
    let metrics = manager.metrics().clone();
    let running = tokio::spawn(manager.run());

    let backups: Api<Backup> = Api::default_namespaced(client.clone());
    let owner = backups
        .create(&PostParams::default(), &Backup::new("owner", BackupSpec { replicas: 1, description: None }))
        .await
        .unwrap();
    let mut child = ConfigMap::default();
    child.metadata.name = Some("child".into());
    child.metadata.owner_references = Some(vec![owner.controller_owner_ref(&()).unwrap()]);
    Api::<ConfigMap>::default_namespaced(client.clone())
        .create(&PostParams::default(), &child)
        .await
        .unwrap();
    for _ in 0..200 {
        if metrics.reconciles("backup", "success") >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(metrics.reconciles("backup", "success") >= 2, "{}", metrics.encode());
    backups.delete("owner", &DeleteParams::background()).await.unwrap();
    for _ in 0..200 {
        if fake.get("v1", "ConfigMap", Some("default"), "child").is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(fake.get("v1", "ConfigMap", Some("default"), "child").is_none(), "collected");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(metrics.reconcile_errors("backup"), 0, "{}", metrics.encode());
    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
"#;
    fs::write(dir.join("tests/owner_with_children.rs"), test).unwrap();
    let run = in_crate(
        dir,
        "cargo",
        &["test", "--quiet", "--test", "owner_with_children"],
    );
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}{}", stderr(&run));
    assert!(out.contains("1 passed"), "{out}");
    fs::remove_file(dir.join("tests/owner_with_children.rs")).unwrap();
}

fn consumed_api(dir: &Path) {
    let manifest = repo()
        .join("codegen-cli/tests/testdata/import/snapshot.storage.k8s.io_volumesnapshots.yaml");
    let import = in_crate(
        dir,
        env!("CARGO_BIN_EXE_kube-codegen"),
        &[
            "import",
            "--input",
            manifest.to_str().unwrap(),
            "--output",
            "src/apis",
        ],
    );
    assert!(import.status.success(), "{}", stderr(&import));
    assert!(
        stderr(&import).contains("add `pub mod snapshot;`"),
        "{}",
        stderr(&import)
    );
    let apis = dir.join("src/apis/mod.rs");
    let text = fs::read_to_string(&apis).unwrap();
    fs::write(
        &apis,
        format!("{text}#[rustfmt::skip]\npub mod snapshot;\n"),
    )
    .unwrap();
    let kind = fs::read_to_string(dir.join("src/apis/snapshot/v1/volume_snapshot.rs")).unwrap();
    assert!(kind.contains("/// +kube-codegen:consumed\n"), "{kind}");
    let update = in_crate(dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
    let mentions = |path: &Path| -> Vec<String> {
        let mut found = Vec::new();
        for entry in walk(path) {
            let text = fs::read_to_string(&entry).unwrap_or_default();
            if text.contains("VolumeSnapshot") || text.contains("volumesnapshots") {
                found.push(entry.display().to_string());
            }
        }
        found
    };
    for place in ["config", "charts", "docs/api", "src/generated/crds.rs"] {
        let found = mentions(&dir.join(place));
        assert!(found.is_empty(), "the consumed kind in {place}: {found:?}");
    }
    let default = in_crate(dir, "kubectl", &["kustomize", "config/default"]);
    if default.status.success() {
        let objects = String::from_utf8_lossy(&default.stdout);
        assert!(!objects.contains("volumesnapshots"), "{objects}");
    }
    lints_clean(dir);
    write(
        dir,
        "tests/snapshots.rs",
        &format!(
            r#"//! The consumed VolumeSnapshot through its generated client, its CRD installed from the
//! snapshotter's manifest.

use backup_operator::generated::Clientset;
use kube_codegen_runtime::FieldManager;

#[tokio::test]
async fn a_consumed_kind_has_a_working_client() {{
    let fake = fake_apiserver::FakeApiServer::new();
    fake.seed_yaml(include_str!({manifest:?})).unwrap();
    let client = kube::Client::new(fake, "default");
    let clients = Clientset::new(client, FieldManager::new("test"));
    let snapshots = clients.snapshot_v1().volumesnapshots("default");
    let snapshot: backup_operator::apis::snapshot::v1::VolumeSnapshot = serde_json::from_value(serde_json::json!({{
        "apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
        "metadata": {{"name": "daily"}},
        "spec": {{"source": {{"persistentVolumeClaimName": "data"}}}},
    }}))
    .unwrap();
    snapshots.create(&snapshot, &Default::default()).await.unwrap();
    let read = snapshots.get("daily").await.unwrap();
    assert_eq!(read.spec.source.persistent_volume_claim_name.as_deref(), Some("data"));
}}
"#
        ),
    );
    let test = in_crate(dir, "cargo", &["test", "--quiet", "--test", "snapshots"]);
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{out}{}", stderr(&test));
    assert!(out.contains("1 passed"), "{out}");
}

/// Every file under `path` (or `path` itself).
fn walk(path: &Path) -> Vec<std::path::PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut out = Vec::new();
    for entry in fs::read_dir(path).into_iter().flatten().flatten() {
        out.extend(walk(&entry.path()));
    }
    out
}

/// `main.rs` has one configuration surface: every flag in `--help` with its environment
/// variable; and `--embedded` serves the crate's webhooks to the in-memory API server, so
/// the sample it creates is defaulted by the crate's own webhook.
fn flags_and_embedded_webhooks(dir: &Path) {
    let help = in_crate(dir, "cargo", &["run", "--quiet", "--", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(help.status.success(), "{text}{}", stderr(&help));
    for (flag, var) in [
        ("--kubeconfig <FILE>", "KUBECONFIG"),
        ("--embedded", "EMBEDDED"),
        ("--leader-elect", "LEADER_ELECT"),
        ("--health-addr <ADDR>", "HEALTH_ADDR"),
        ("--metrics-addr <ADDR>", "METRICS_ADDR"),
        (
            "--max-concurrent-reconciles <N>",
            "MAX_CONCURRENT_RECONCILES",
        ),
        ("--reconcile-timeout <SECONDS>", "RECONCILE_TIMEOUT"),
        ("--webhook-addr <ADDR>", "WEBHOOK_ADDR"),
        ("--cert-dir <DIR>", "WEBHOOK_CERT_DIR"),
        ("--install-webhooks", "INSTALL_WEBHOOKS"),
    ] {
        let entry = text
            .split(&format!("      {flag}\n"))
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .unwrap_or_else(|| panic!("{flag} in:\n{text}"));
        assert!(entry.contains(&format!("[env: {var}")), "{flag}: {entry}");
    }
    // The environment variable the earlier main.rs read still works.
    let mut install = Command::new("cargo");
    install
        .current_dir(dir)
        .args(["run", "--quiet"])
        .env("CARGO_TARGET_DIR", target_dir())
        .env("INSTALL_WEBHOOKS", "1")
        .env_remove("WEBHOOK_ADDR");
    let refused = install.output().unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--install-webhooks (INSTALL_WEBHOOKS) needs --webhook-addr"),
        "{}",
        stderr(&refused)
    );
    let embedded = in_crate(dir, "cargo", &["run", "--quiet", "--", "--embedded"]);
    let out = String::from_utf8_lossy(&embedded.stdout);
    assert!(embedded.status.success(), "{out}{}", stderr(&embedded));
    assert!(
        out.contains("the webhooks are served in process")
            && out.contains("\"app.kubernetes.io/managed-by\": \"backup-operator\"")
            && out.contains("controller_runtime_reconcile_errors_total{controller=\"backup\"} 0"),
        "{out}"
    );
    sigterm_during_the_initial_sync(dir);
}

/// The binary on a server without the crate's CRD, so its cache never syncs: SIGTERM then
/// ends it within 5 s, with success (the Kubernetes grace period is 30 s).
fn sigterm_during_the_initial_sync(dir: &Path) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = fake_apiserver::FakeApiServer::new();
    let served = runtime
        .block_on(fake.serve(([127, 0, 0, 1], 0).into()))
        .unwrap();
    let kubeconfig = dir.join("target/sigterm-kubeconfig.yaml");
    fs::create_dir_all(kubeconfig.parent().unwrap()).unwrap();
    fs::write(&kubeconfig, served.kubeconfig()).unwrap();
    let mut child = Command::new(target_dir().join("debug/backup-operator"))
        .args(["--kubeconfig", kubeconfig.to_str().unwrap()])
        .args(["--health-addr", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        child.try_wait().unwrap().is_none(),
        "still waiting for its cache"
    );
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let signalled = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if signalled.elapsed() > std::time::Duration::from_secs(10) {
            let _ = child.kill();
            panic!("no exit within 10 s of SIGTERM during the initial sync");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let took = signalled.elapsed();
    let mut logs = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut logs).unwrap();
    assert!(status.success(), "{status:?}\n{logs}");
    assert!(took < std::time::Duration::from_secs(5), "{took:?}\n{logs}");
    assert!(!logs.contains("caches synced"), "{logs}");
    let _ = fs::remove_file(&kubeconfig);
    drop(served);
}

/// `charts/backup-operator`, rendered with its default values (only the plain substitutions
/// `kube-codegen chart` writes: `{{ .Release.Namespace }}` and `{{ .Values.x.y }}`), has the
/// objects of `config/default` but its Namespace (helm's `--create-namespace`); a stale chart
/// fails verify.
fn chart_renders_the_same_objects(dir: &Path, default: &str) {
    let namespace = "backup-operator-system";
    let chart = dir.join("charts/backup-operator");
    let values: Value =
        serde_saphyr::from_str(&fs::read_to_string(chart.join("values.yaml")).unwrap()).unwrap();
    let mut templates: Vec<_> = fs::read_dir(chart.join("templates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    templates.sort();
    let mut rendered = Vec::new();
    for template in templates {
        let mut text = fs::read_to_string(&template)
            .unwrap()
            .replace("{{ .Release.Namespace }}", namespace);
        while let Some(start) = text.find("{{ .Values.") {
            let end = start + text[start..].find("}}").unwrap();
            let path = text[start + "{{ .Values.".len()..end].trim().to_owned();
            let value = path.split('.').fold(&values, |v, key| &v[key]);
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Null => panic!("no value {path} in values.yaml"),
                other => other.to_string(),
            };
            text.replace_range(start..end + 2, &value);
        }
        assert!(!text.contains("{{"), "{}: {text}", template.display());
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        rendered.extend(docs.into_iter().filter(|d| !d.is_null()));
    }
    let docs: Vec<Value> = serde_saphyr::from_multiple(default).unwrap();
    let mut expected: Vec<Value> = docs
        .into_iter()
        .filter(|d| !d.is_null() && d["kind"] != "Namespace")
        .collect();
    let key = |v: &Value| {
        let m = &v["metadata"];
        format!("{} {} {}", v["kind"], m["namespace"], m["name"])
    };
    expected.sort_by_key(key);
    rendered.sort_by_key(key);
    assert_eq!(rendered.len(), expected.len(), "{rendered:#?}");
    for (r, e) in rendered.iter().zip(&expected) {
        assert_eq!(r, e, "{}", key(e));
    }
    // A chart edited by hand (or stale) fails verify, naming it; regenerating puts it back.
    let values_file = chart.join("values.yaml");
    let before = fs::read_to_string(&values_file).unwrap();
    fs::write(&values_file, before.replace("replicas: 1", "replicas: 2")).unwrap();
    let verify = in_crate(dir, "hack/verify-codegen.sh", &[]);
    assert!(!verify.status.success());
    assert!(
        stderr(&verify).contains("values.yaml"),
        "{}",
        stderr(&verify)
    );
    let update = in_crate(dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
    assert_eq!(fs::read_to_string(&values_file).unwrap(), before);
}

/// The controller's test runs it as its ServiceAccount bound to the generated RBAC: without
/// the status marker, the test fails with the 403 a cluster gives; put back, it passes.
fn missing_rbac_marker_is_a_403(dir: &Path) {
    let controller = dir.join("src/controllers/backup.rs");
    let original = fs::read_to_string(&controller).unwrap();
    let marker =
        "// +kubebuilder:rbac:groups=backup.example.com,resources=backups/status,verbs=patch\n";
    assert!(original.contains(marker), "{original}");
    fs::write(&controller, original.replace(marker, "")).unwrap();
    let update = in_crate(dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
    let test = in_crate(dir, "cargo", &["test", "--quiet", "--test", "backup"]);
    let out = String::from_utf8_lossy(&test.stdout);
    assert!(!test.status.success(), "passes without the marker: {out}");
    assert!(
        out.contains(
            "User \"system:serviceaccount:backup-operator-system:backup-operator\" cannot patch resource \"backups/status\" in API group \"backup.example.com\" in the namespace \"kt-"
        ),
        "{out}"
    );
    fs::write(&controller, original).unwrap();
    let update = in_crate(dir, "hack/update-codegen.sh", &[]);
    assert!(update.status.success(), "{}", stderr(&update));
}

/// `config/default` renders (kustomize, offline) the whole operator with its webhooks, the
/// converting CRD pointing at the webhook Service; the cert-manager overlay adds the
/// certificate and the CA injection. Skipped where kubectl is not installed.
fn deployable_as_generated(dir: &Path) {
    let render = |overlay: &str| {
        let out = Command::new("kubectl")
            .args(["kustomize", overlay])
            .current_dir(dir)
            .output();
        match out {
            Ok(out) => {
                assert!(out.status.success(), "{}", stderr(&out));
                Some(String::from_utf8_lossy(&out.stdout).into_owned())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => panic!("kubectl: {e}"),
        }
    };
    let Some(default) = render("config/default") else {
        eprintln!("kubectl not installed: config/default not rendered");
        return;
    };
    for kind in [
        "kind: Namespace",
        "kind: CustomResourceDefinition",
        "kind: ServiceAccount",
        "kind: ClusterRole\n",
        "kind: Deployment",
        "kind: Service\n",
        "kind: MutatingWebhookConfiguration",
        "kind: ValidatingWebhookConfiguration",
    ] {
        assert!(default.contains(kind), "{kind} in:\n{default}");
    }
    for line in [
        "path: /convert-restore-example-com-restorejob",
        "value: 0.0.0.0:9443",
        // The self-managed certificate's Secret, in the operator's namespace.
        "kind: Role\n",
    ] {
        assert!(default.contains(line), "{line} in:\n{default}");
    }
    chart_renders_the_same_objects(dir, &default);
    assert!(
        !default.contains("cert-manager") && !default.contains("WEBHOOK_CERT_DIR"),
        "config/default needs no cert-manager:\n{default}"
    );
    let with_cert_manager = render("config/cert-manager").unwrap();
    for line in [
        "kind: Certificate",
        "cert-manager.io/inject-ca-from: backup-operator-system/backup-operator-serving-cert",
        "name: WEBHOOK_CERT_DIR",
        "secretName: backup-operator-webhook-tls",
    ] {
        assert!(
            with_cert_manager.contains(line),
            "{line} in:\n{with_cert_manager}"
        );
    }
}

#[test]
fn arguments_init_refuses_leave_nothing_behind() {
    let tmp = TempDir::new("init-refused");
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "op",
                "--group",
                "backup",
                "--version",
                "v1",
                "--kind",
                "Backup",
            ],
            "`--group backup` must be a DNS subdomain with at least one dot",
        ),
        (
            &[
                "op",
                "--group",
                "a.example.com",
                "--version",
                "1",
                "--kind",
                "Backup",
            ],
            "`--version 1` must look like `v1`",
        ),
        (
            &[
                "op",
                "--group",
                "a.example.com",
                "--version",
                "v1",
                "--kind",
                "backup",
            ],
            "`--kind backup` must be UpperCamelCase",
        ),
        (
            &[
                "My Op",
                "--group",
                "a.example.com",
                "--version",
                "v1",
                "--kind",
                "Backup",
            ],
            "cannot name a crate",
        ),
    ];
    for (args, message) in cases {
        let out = init(&tmp.0, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
        assert_eq!(
            fs::read_dir(&tmp.0).unwrap().count(),
            0,
            "{args:?} wrote something"
        );
    }
}

/// Every file under `dir` with its bytes, sorted: what a failed command must leave as it was.
fn files_under(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_failed_step_of_init_is_named_with_its_cause_and_nothing_stays() {
    let tmp = TempDir::new("init-step");
    // A checkout whose runtime crate cargo cannot read: the crate is written and its clients
    // and RBAC generated, then building the CRD fails at `cargo metadata`.
    write(
        &tmp.0,
        "checkout/codegen-runtime/Cargo.toml",
        "not toml [\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .current_dir(&tmp.0)
        .env("CARGO_TARGET_DIR", target_dir())
        .args([
            "init",
            "op",
            "--group",
            "backup.example.com",
            "--version",
            "v1",
            "--kind",
            "Backup",
            "--kube-codegen-path",
            "checkout",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: init: building the CRD failed: `cargo metadata` failed for `"),
        "the step and its cause: {err}"
    );
    assert!(
        !err.contains("(above)\n") && !err.contains("failed (above)"),
        "{err}"
    );
    assert!(!tmp.0.join("op").exists(), "what init wrote is removed");
}

#[test]
fn a_failed_step_of_create_is_named_with_its_diagnostics_and_the_crate_is_put_back() {
    let tmp = TempDir::new("create-step");
    let dir = tmp.0.join("op");
    write(
        &dir,
        "Cargo.toml",
        "[package]\nname = \"op\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(
        &dir,
        "src/controllers/mod.rs",
        "// kube-codegen create api: new controller modules above this line.\n        // kube-codegen create api: new controllers above this line.\n",
    );
    write(&dir, "src/apis/mod.rs", "pub mod widgets;\n");
    write(&dir, "src/apis/widgets/mod.rs", "pub mod v1;\n");
    write(
        &dir,
        "src/apis/widgets/v1/mod.rs",
        "//! +groupName=widgets.example.com\npub mod widget;\n",
    );
    // A mistake in a kind the crate has: regenerating after adding one fails.
    write(
        &dir,
        "src/apis/widgets/v1/widget.rs",
        "/// +genclient\n/// +genclient:bogus\n#[derive(CustomResource)]\n#[kube(group = \"widgets.example.com\", version = \"v1\", kind = \"Widget\", namespaced)]\npub struct WidgetSpec {}\n",
    );
    let before = files_under(&dir);
    let out = create(
        &dir,
        "api",
        &[
            "--group",
            "backup.example.com",
            "--version",
            "v1",
            "--kind",
            "Backup",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("+genclient:bogus") && err.contains("--> "),
        "the diagnostic, located: {err}"
    );
    assert!(
        err.contains(
            "error: create api: generating the typed clients failed: could not generate: 1 error\nerror: nothing was changed"
        ),
        "the step and its cause: {err}"
    );
    assert_eq!(files_under(&dir), before, "the crate as it was");
}
