//! `kube-codegen compat`: findings on standard output, exit 1 for a breaking change, 0 for
//! none, 2 for input it cannot read; checked on two releases of a public CRD set.

use std::path::{Path, PathBuf};

mod support;

use support::{TempDir, run, stderr, write};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata/compat")
        .join(name)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Gateway API's ReferenceGrant between v1.5.1 and v1.6.0 (the two files as released): the
/// only change a reader finds besides the bundle-version annotation is `spec` becoming
/// required in both versions.
#[test]
fn two_releases_of_gateway_api_differ_in_what_a_reader_sees() {
    let dir = TempDir::new("gateway");
    let baseline = testdata("gateway-api-v1.5.1");
    let current = testdata("gateway-api-v1.6.0");
    let args = [
        "compat",
        "--baseline",
        baseline.to_str().unwrap(),
        "--current",
        current.to_str().unwrap(),
    ];
    let out = run(&dir.0, &args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "breaking: referencegrants.gateway.networking.k8s.io v1: spec: now required; objects and clients without it are refused [field-required]\n\
         breaking: referencegrants.gateway.networking.k8s.io v1beta1: spec: now required; objects and clients without it are refused [field-required]\n"
    );
    assert!(
        stderr(&out).contains("error: 2 changes, 2 breaking"),
        "{}",
        stderr(&out)
    );

    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let out = run(&dir.0, &json_args);
    assert_eq!(out.status.code(), Some(1));
    let findings: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let findings = findings.as_array().unwrap();
    assert_eq!(findings.len(), 2);
    for f in findings {
        assert_eq!(f["crd"], "referencegrants.gateway.networking.k8s.io");
        assert_eq!(f["path"], "spec");
        assert_eq!(f["change"], "field-required");
        assert_eq!(f["breaking"], true);
    }

    // The other way round, `spec` is no longer required: compatible, exit 0.
    let out = run(
        &dir.0,
        &[
            "compat",
            "--baseline",
            current.to_str().unwrap(),
            "--current",
            baseline.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 2);
    assert!(stdout(&out).lines().all(|l| l.starts_with("compatible: ")));
}

#[test]
fn unreadable_input_exits_2_and_other_objects_are_passed_over() {
    let dir = TempDir::new("input");
    let current = testdata("gateway-api-v1.6.0");
    let out = run(
        &dir.0,
        &[
            "compat",
            "--baseline",
            "missing",
            "--current",
            current.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error: cannot read `missing`"),
        "{}",
        stderr(&out)
    );

    write(
        &dir.0,
        "bad/crd.yaml",
        "kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\nspec: [\n",
    );
    let out = run(
        &dir.0,
        &[
            "compat",
            "--baseline",
            "bad",
            "--current",
            current.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not valid YAML"), "{}", stderr(&out));

    // A kustomization beside the CRDs, as in `config/crd`, is not an API change.
    let same = dir.0.join("same");
    std::fs::create_dir_all(&same).unwrap();
    for entry in std::fs::read_dir(&current).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, same.join(path.file_name().unwrap())).unwrap();
    }
    write(
        &same,
        "kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
    );
    let out = run(
        &dir.0,
        &[
            "compat",
            "--baseline",
            "same",
            "--current",
            current.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains("0 changes, 0 breaking"),
        "{}",
        stderr(&out)
    );
}

/// `hack/verify-compat.sh` of an `init` crate: skipped without a baseline, then against
/// `config/crd` as the newest tag has it, or `compat/baseline/` when that exists; the gate's
/// exit status is the script's.
#[test]
fn the_ci_script_of_an_init_crate_finds_its_baseline() {
    let dir = TempDir::new("ci");
    let root = &dir.0;
    // A stand-in for kube-codegen: shows its arguments and the baseline it was given.
    write(
        root,
        "fake-codegen",
        "#!/usr/bin/env bash\necho \"args: $1 $2 <dir> $4 $5\"\nfor f in \"$3\"/*; do echo \"$(basename \"$f\"): $(cat \"$f\")\"; done\nexit \"${FAKE_EXIT:-0}\"\n",
    );
    let script = include_str!("../src/scaffold/template/verify-compat.sh.tmpl").replace(
        "__CODEGEN_DEFAULT__",
        &root.join("fake-codegen").display().to_string(),
    );
    write(root, "hack/verify-compat.sh", &script);
    let run_script = |exit: &str| {
        std::process::Command::new("bash")
            .arg(root.join("hack/verify-compat.sh"))
            .env("FAKE_EXIT", exit)
            .output()
            .unwrap()
    };
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(root)
            .args(["-c", "user.name=ci", "-c", "user.email=ci@example.com"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    };
    std::process::Command::new("chmod")
        .args(["+x", root.join("fake-codegen").to_str().unwrap()])
        .status()
        .unwrap();

    let out = run_script("0");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "compat: skipped, no baseline yet (tag a release, or put its CRDs in compat/baseline/)\n"
    );

    git(&["init", "-q"]);
    write(root, "config/crd/a.yaml", "released\n");
    git(&["add", "."]);
    git(&["commit", "-qm", "release"]);
    git(&["tag", "v0.1.0"]);
    write(root, "config/crd/a.yaml", "changed since\n");
    let out = run_script("0");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "compat: against config/crd at v0.1.0\nargs: compat --baseline <dir> --input src/apis\na.yaml: released\n"
    );
    assert_eq!(run_script("1").status.code(), Some(1));

    write(root, "compat/baseline/b.yaml", "kept by hand\n");
    let out = run_script("0");
    assert_eq!(
        stdout(&out),
        "args: compat --baseline <dir> --input src/apis\nb.yaml: kept by hand\n"
    );
}

/// `(crd, version, path, change, breaking)` of each finding of a JSON report, sorted.
fn findings(out: &std::process::Output) -> Vec<(String, String, String, String, bool)> {
    let list: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
    let mut list: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["crd"].as_str().unwrap().to_owned(),
                f["version"].as_str().unwrap_or("").to_owned(),
                f["path"].as_str().unwrap().to_owned(),
                f["change"].as_str().unwrap().to_owned(),
                f["breaking"].as_bool().unwrap(),
            )
        })
        .collect();
    list.sort();
    list
}

/// Velero's 13 CRDs as released in v1.16.0 and v1.17.0 (`config/crd/v1/bases` and
/// `config/crd/v2alpha1/bases` at those tags of github.com/vmware-tanzu/velero, unchanged).
/// What a reader of both sets lists, every leaf that differs besides controller-gen's
/// version annotation: `spec.resticIdentifier` of BackupRepository no longer required and
/// its description reworded; the PodVolumeBackup and PodVolumeRestore phases `Accepted`,
/// `Prepared`, `Canceling`, `Canceled`; their printer columns; and eight new optional
/// fields. All compatible; the other way round, each is breaking except the description
/// and the printer columns.
#[test]
fn two_releases_of_velero_differ_in_what_a_reader_sees() {
    let dir = TempDir::new("velero");
    let old = testdata("velero-v1.16.0");
    let new = testdata("velero-v1.17.0");
    let compare = |baseline: &Path, current: &Path| {
        run(
            &dir.0,
            &[
                "compat",
                "--baseline",
                baseline.to_str().unwrap(),
                "--current",
                current.to_str().unwrap(),
                "--format",
                "json",
            ],
        )
    };
    let row = |crd: &str, version: &str, path: &str, change: &str, breaking: bool| {
        (
            format!("{crd}.velero.io"),
            version.to_owned(),
            path.to_owned(),
            change.to_owned(),
            breaking,
        )
    };
    let out = compare(&old, &new);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut want = vec![
        row(
            "backuprepositories",
            "v1",
            "spec.resticIdentifier",
            "validation-loosened",
            false,
        ),
        row(
            "backuprepositories",
            "v1",
            "spec.resticIdentifier",
            "description-changed",
            false,
        ),
        row(
            "backups",
            "v1",
            "spec.volumeGroupSnapshotLabelKey",
            "field-added",
            false,
        ),
        row(
            "datauploads",
            "v2alpha1",
            "spec.csiSnapshot.driver",
            "field-added",
            false,
        ),
        row(
            "podvolumebackups",
            "v1",
            "spec.cancel",
            "field-added",
            false,
        ),
        row(
            "podvolumebackups",
            "v1",
            "status.phase",
            "enum-value-added",
            false,
        ),
        row(
            "podvolumebackups",
            "v1",
            "status.acceptedTimestamp",
            "field-added",
            false,
        ),
        row(
            "podvolumebackups",
            "v1",
            "additionalPrinterColumns",
            "printer-columns-changed",
            false,
        ),
        row(
            "podvolumerestores",
            "v1",
            "spec.cancel",
            "field-added",
            false,
        ),
        row(
            "podvolumerestores",
            "v1",
            "status.phase",
            "enum-value-added",
            false,
        ),
        row(
            "podvolumerestores",
            "v1",
            "status.acceptedTimestamp",
            "field-added",
            false,
        ),
        row(
            "podvolumerestores",
            "v1",
            "status.node",
            "field-added",
            false,
        ),
        row(
            "podvolumerestores",
            "v1",
            "additionalPrinterColumns",
            "printer-columns-changed",
            false,
        ),
        row(
            "schedules",
            "v1",
            "spec.template.volumeGroupSnapshotLabelKey",
            "field-added",
            false,
        ),
    ];
    want.sort();
    assert_eq!(findings(&out), want);

    let out = compare(&new, &old);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut want: Vec<_> = want
        .into_iter()
        .map(|(crd, version, path, change, _)| {
            let (change, breaking) = match change.as_str() {
                "validation-loosened" => ("field-required", true),
                "field-added" => ("field-removed", true),
                "enum-value-added" => ("enum-value-removed", true),
                other => (other, false),
            };
            (crd, version, path, change.to_owned(), breaking)
        })
        .collect();
    want.sort();
    assert_eq!(findings(&out), want);
    assert!(
        stderr(&out)
            .contains("error: 14 changes, 11 breaking, between 13 baseline and 13 current CRDs"),
        "{}",
        stderr(&out)
    );
}
