//! `kube-codegen compat`: findings on standard output, each classed breaking, tightening or
//! compatible; exit 1 for a change of the `--fail-on` class or worse, 0 for none, 2 for input
//! it cannot compare. Checked on consecutive releases of public CRD sets (Gateway API,
//! external-snapshotter, Velero; `testdata/compat/README.md` says where each is from and what
//! its release notes say), against what the release notes say of each pair.

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
/// required in both versions. Required at the root, it is breaking: ratcheting would need the
/// whole object unchanged, so a stored ReferenceGrant without `spec` can no longer be written.
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
        "breaking: referencegrants.gateway.networking.k8s.io v1: spec: now required; at the root, ratcheting would need the whole object, metadata included, to be unchanged, so stored objects without it can no longer be written at all, not even to remove a finalizer [field-required]\n\
         breaking: referencegrants.gateway.networking.k8s.io v1beta1: spec: now required; at the root, ratcheting would need the whole object, metadata included, to be unchanged, so stored objects without it can no longer be written at all, not even to remove a finalizer [field-required]\n"
    );
    assert!(
        stderr(&out).contains("error: 2 changes, 2 breaking, 0 tightening, between 1 baseline and 1 current CRD: failed on 2 breaking or tightening changes (`--fail-on tightening`)"),
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
        assert_eq!(f["class"], "breaking");
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
        stderr(&out).contains("0 changes, 0 breaking, 0 tightening"),
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

/// `(class, crd, version, path, change)` of each finding of a JSON report, sorted.
fn findings(out: &std::process::Output) -> Vec<(String, String, String, String, String)> {
    let list: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
    let mut list: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(
                f["breaking"].as_bool(),
                Some(f["class"] == "breaking"),
                "{f}"
            );
            (
                f["class"].as_str().unwrap().to_owned(),
                f["crd"].as_str().unwrap().to_owned(),
                f["version"].as_str().unwrap_or("").to_owned(),
                f["path"].as_str().unwrap().to_owned(),
                f["change"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    list.sort();
    list
}

/// Velero's 13 CRDs as released in v1.16.0 and v1.17.0 (`config/crd/v1/bases` and
/// `config/crd/v2alpha1/bases` at those tags of github.com/vmware-tanzu/velero, unchanged).
/// What a reader of both sets lists, every leaf that differs besides controller-gen's
/// version annotation and descriptions: `spec.resticIdentifier` of BackupRepository no
/// longer required; the PodVolumeBackup and PodVolumeRestore phases `Accepted`, `Prepared`,
/// `Canceling`, `Canceled`; their printer columns; and eight new optional fields. All
/// compatible; the other way round, the removed fields are breaking, the field made required
/// again and the removed phases tightening, the printer columns compatible.
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
    let row = |crd: &str, version: &str, path: &str, change: &str| {
        (
            "compatible".to_owned(),
            format!("{crd}.velero.io"),
            version.to_owned(),
            path.to_owned(),
            change.to_owned(),
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
        ),
        row(
            "backups",
            "v1",
            "spec.volumeGroupSnapshotLabelKey",
            "field-added",
        ),
        row(
            "datauploads",
            "v2alpha1",
            "spec.csiSnapshot.driver",
            "field-added",
        ),
        row("podvolumebackups", "v1", "spec.cancel", "field-added"),
        row("podvolumebackups", "v1", "status.phase", "enum-value-added"),
        row(
            "podvolumebackups",
            "v1",
            "status.acceptedTimestamp",
            "field-added",
        ),
        row(
            "podvolumebackups",
            "v1",
            "additionalPrinterColumns",
            "printer-columns-changed",
        ),
        row("podvolumerestores", "v1", "spec.cancel", "field-added"),
        row(
            "podvolumerestores",
            "v1",
            "status.phase",
            "enum-value-added",
        ),
        row(
            "podvolumerestores",
            "v1",
            "status.acceptedTimestamp",
            "field-added",
        ),
        row("podvolumerestores", "v1", "status.node", "field-added"),
        row(
            "podvolumerestores",
            "v1",
            "additionalPrinterColumns",
            "printer-columns-changed",
        ),
        row(
            "schedules",
            "v1",
            "spec.template.volumeGroupSnapshotLabelKey",
            "field-added",
        ),
    ];
    want.sort();
    assert_eq!(findings(&out), want);

    let out = compare(&new, &old);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut want: Vec<_> = want
        .into_iter()
        .map(|(_, crd, version, path, change)| {
            let (class, change) = match change.as_str() {
                "validation-loosened" => ("tightening", "field-required"),
                "field-added" => ("breaking", "field-removed"),
                "enum-value-added" => ("tightening", "enum-value-removed"),
                other => ("compatible", other),
            };
            (class.to_owned(), crd, version, path, change.to_owned())
        })
        .collect();
    want.sort();
    assert_eq!(findings(&out), want);
    assert!(
        stderr(&out).contains(
            "error: 13 changes, 8 breaking, 3 tightening, between 13 baseline and 13 current CRDs"
        ),
        "{}",
        stderr(&out)
    );
}

/// `kube-codegen compat --baseline DIR --current DIR --format json [--fail-on CLASS]`.
fn compat(dir: &Path, baseline: &Path, current: &Path, fail_on: &str) -> std::process::Output {
    run(
        dir,
        &[
            "compat",
            "--baseline",
            baseline.to_str().unwrap(),
            "--current",
            current.to_str().unwrap(),
            "--format",
            "json",
            "--fail-on",
            fail_on,
        ],
    )
}

/// One expected finding: `(class, crd, version, path, change)`.
type Row = (String, String, String, String, String);

fn row(class: &str, crd: &str, version: &str, path: &str, change: &str) -> Row {
    (
        class.to_owned(),
        crd.to_owned(),
        version.to_owned(),
        path.to_owned(),
        change.to_owned(),
    )
}

/// Compares release `old` with release `new` of `set` (a directory below
/// `testdata/compat`): the findings must be `want` exactly, and the exit status with
/// `--fail-on breaking` and `--fail-on tightening` what the worst finding calls for.
fn release_pair(set: &str, old: &str, new: &str, mut want: Vec<Row>) {
    let dir = TempDir::new(&format!("{set}-{new}"));
    let (baseline, current) = (testdata(set).join(old), testdata(set).join(new));
    want.sort();
    let worst = want
        .iter()
        .map(|r| r.0.as_str())
        .fold("none", |worst, class| match (worst, class) {
            ("breaking", _) | (_, "breaking") => "breaking",
            ("tightening", _) | (_, "tightening") => "tightening",
            _ => "compatible",
        });
    for fail_on in ["breaking", "tightening"] {
        let out = compat(&dir.0, &baseline, &current, fail_on);
        let fails = worst == "breaking" || (worst == "tightening" && fail_on == "tightening");
        assert_eq!(
            out.status.code(),
            Some(i32::from(fails)),
            "{set} {old} -> {new} --fail-on {fail_on}: {}",
            stderr(&out)
        );
        assert_eq!(findings(&out), want, "{set} {old} -> {new}");
        if fails {
            assert!(
                stderr(&out).contains(&format!("(`--fail-on {fail_on}`)")),
                "{}",
                stderr(&out)
            );
        }
    }
}

const GATEWAY: &str = "gateway.networking.k8s.io";

fn gw(name: &str) -> String {
    format!("{name}.{GATEWAY}")
}

/// Gateway API, standard channel (GatewayClass and ReferenceGrant). v1.1.0 -> v1.2.0, which
/// the notes call breaking: ReferenceGrant's `v1alpha2` (unserved, but possibly in
/// `storedVersions`, which the notes warn about) is removed. The notes call GatewayClass's
/// new status default (condition reason `Waiting` -> `Pending`) a bug fix; a changed default
/// changes what stored objects without a status read as, which counts as breaking.
#[test]
fn gateway_api_standard_v1_1_0_to_v1_2_0_is_breaking() {
    release_pair(
        "gateway-api-standard",
        "v1.1.0",
        "v1.2.0",
        vec![
            row(
                "breaking",
                &gw("gatewayclasses"),
                "v1",
                "status",
                "default-changed",
            ),
            row(
                "breaking",
                &gw("gatewayclasses"),
                "v1beta1",
                "status",
                "default-changed",
            ),
            row(
                "breaking",
                &gw("referencegrants"),
                "v1alpha2",
                "",
                "version-removed",
            ),
        ],
    );
}

/// v1.2.0 -> v1.2.1 (a patch release: Go client code only) and v1.2.1 -> v1.3.0 ("None of
/// these API changes represent breaking changes"): only the bundle-version annotation
/// changes in these two CRDs. No findings.
#[test]
fn gateway_api_standard_patch_and_minor_releases_change_nothing_here() {
    release_pair("gateway-api-standard", "v1.2.0", "v1.2.1", vec![]);
    release_pair("gateway-api-standard", "v1.2.1", "v1.3.0", vec![]);
}

/// GRPCRoute v1.2.1 -> v1.3.0, which the notes call free of breaking changes: the match
/// limit raised from 8 to 64, request mirroring by percent or fraction added. It passes
/// `--fail-on breaking`. The notes count the rule `!(has(self.percent) && has(self.fraction))`
/// on both new `requestMirror` objects as part of a compatible feature; a new rule is
/// reported as tightening all the same, since telling that it only constrains fields no
/// stored object has would take reading the rule (here it cannot fail on stored objects).
#[test]
fn gateway_api_grpcroute_v1_2_1_to_v1_3_0_passes_fail_on_breaking() {
    let routes = gw("grpcroutes");
    let at = |path: &str| format!("spec.rules[*].{path}");
    let mut want = Vec::new();
    for filters in ["filters[*]", "backendRefs[*].filters[*]"] {
        let mirror = at(&format!("{filters}.requestMirror"));
        want.push(row("tightening", &routes, "v1", &mirror, "cel-rule-added"));
        for field in ["percent", "fraction"] {
            let path = format!("{mirror}.{field}");
            want.push(row("compatible", &routes, "v1", &path, "field-added"));
        }
    }
    want.push(row(
        "compatible",
        &routes,
        "v1",
        &at("matches"),
        "validation-loosened",
    ));
    release_pair("gateway-api-standard-grpcroutes", "v1.2.1", "v1.3.0", want);
}

/// Gateway API, experimental channel (GatewayClass; BackendLBPolicy, replaced by
/// XBackendTrafficPolicy in v1.3.0). v1.1.0 -> v1.2.0, breaking in the notes: GatewayClass's
/// `status.supportedFeatures` went from a set of strings to a map list of objects. The
/// BackendLBPolicy rule was rewritten to also allow objects without `cookieConfig` (a
/// loosening in the notes, #3215); a rewritten rule is reported as tightening, since which
/// of two rules accepts more cannot be told in general.
#[test]
fn gateway_api_experimental_v1_1_0_to_v1_2_0_is_breaking() {
    let classes = gw("gatewayclasses");
    let mut want = vec![row(
        "tightening",
        &gw("backendlbpolicies"),
        "v1alpha2",
        "spec.sessionPersistence",
        "cel-rule-changed",
    )];
    for version in ["v1", "v1beta1"] {
        want.push(row(
            "breaking",
            &classes,
            version,
            "status",
            "default-changed",
        ));
        want.push(row(
            "breaking",
            &classes,
            version,
            "status.supportedFeatures",
            "list-type-changed",
        ));
        want.push(row(
            "breaking",
            &classes,
            version,
            "status.supportedFeatures[*]",
            "type-changed",
        ));
    }
    release_pair("gateway-api-experimental", "v1.1.0", "v1.2.0", want);
}

/// v1.2.0 -> v1.2.1: the annotation only. v1.2.1 -> v1.3.0: BackendLBPolicy is gone
/// (renamed to XBackendTrafficPolicy, in another group: "Migrating ... will require
/// recreating these resources"), breaking; the new CRD is compatible.
#[test]
fn gateway_api_experimental_later_releases() {
    release_pair("gateway-api-experimental", "v1.2.0", "v1.2.1", vec![]);
    release_pair(
        "gateway-api-experimental",
        "v1.2.1",
        "v1.3.0",
        vec![
            row("breaking", &gw("backendlbpolicies"), "", "", "crd-removed"),
            row(
                "compatible",
                "xbackendtrafficpolicies.gateway.networking.x-k8s.io",
                "",
                "",
                "crd-added",
            ),
        ],
    );
}

const SNAPSHOT: &str = "snapshot.storage.k8s.io";
const GROUP_SNAPSHOT: &str = "groupsnapshot.storage.k8s.io";

/// external-snapshotter v7.0.0 -> v8.0.0: "The validating logic ... has been replaced by CEL
/// validation rules" (Urgent Upgrade Notes), tightening: each `oneOf` of required fields
/// became an exactly-one rule (the `oneOf` removed is a loosening) with transition rules that
/// keep the fields once set. The alpha group snapshot API replaced two status lists
/// (breaking: the old ones are pruned from stored objects). Controller-gen now writes
/// `x-kubernetes-list-type: atomic` on label selectors that had none: no finding, since an
/// unset list type is atomic.
#[test]
fn external_snapshotter_v7_to_v8_tightens_validation() {
    let snapshots = format!("volumesnapshots.{SNAPSHOT}");
    let groups = format!("volumegroupsnapshots.{GROUP_SNAPSHOT}");
    let contents = format!("volumegroupsnapshotcontents.{GROUP_SNAPSHOT}");
    let mut want = Vec::new();
    let rules = |want: &mut Vec<Row>, crd: &str, version: &str, paths: &[(&str, usize)]| {
        for (path, n) in paths {
            for _ in 0..*n {
                want.push(row("tightening", crd, version, path, "cel-rule-added"));
            }
        }
    };
    rules(
        &mut want,
        &snapshots,
        "v1",
        &[
            ("spec.source", 3),
            ("spec.source.persistentVolumeClaimName", 1),
            ("spec.source.volumeSnapshotContentName", 1),
            ("spec.volumeSnapshotClassName", 1),
        ],
    );
    want.push(row(
        "compatible",
        &snapshots,
        "v1",
        "spec.source",
        "validation-loosened",
    ));
    rules(
        &mut want,
        &groups,
        "v1alpha1",
        &[
            ("spec.source", 3),
            ("spec.source.selector", 1),
            ("spec.source.volumeGroupSnapshotContentName", 1),
            ("spec.volumeGroupSnapshotClassName", 1),
        ],
    );
    want.push(row(
        "breaking",
        &groups,
        "v1alpha1",
        "status.volumeSnapshotRefList",
        "field-removed",
    ));
    want.push(row(
        "compatible",
        &groups,
        "v1alpha1",
        "status.pvcVolumeSnapshotRefList",
        "field-added",
    ));
    rules(
        &mut want,
        &contents,
        "v1alpha1",
        &[
            ("spec.source", 3),
            ("spec.source.groupSnapshotHandles", 1),
            ("spec.source.volumeHandles", 1),
            ("spec.volumeGroupSnapshotRef", 2),
        ],
    );
    want.push(row(
        "compatible",
        &contents,
        "v1alpha1",
        "spec.source",
        "validation-loosened",
    ));
    want.push(row(
        "breaking",
        &contents,
        "v1alpha1",
        "status.volumeSnapshotContentRefList",
        "field-removed",
    ));
    want.push(row(
        "compatible",
        &contents,
        "v1alpha1",
        "status.pvVolumeSnapshotContentList",
        "field-added",
    ));
    release_pair("external-snapshotter", "v7.0.0", "v8.0.0", want);
}

/// v8.0.0 -> v8.2.0 (v8.1.0's CRDs are v8.0.0's, byte for byte): breaking in the notes. The
/// group snapshot API moved from `v1alpha1` to `v1beta1`, removing `v1alpha1`, with
/// conversion `None`; VolumeGroupSnapshotContent's `status.creationTime` became a string and
/// a status list of each was removed, so objects stored as `v1alpha1` do not read as
/// `v1beta1` (`storage-changed-without-conversion`); VolumeGroupSnapshotClass only changed
/// its version's name.
#[test]
fn external_snapshotter_v8_0_to_v8_2_replaces_an_alpha_api() {
    let mut want = Vec::new();
    for kind in [
        "volumegroupsnapshotclasses",
        "volumegroupsnapshotcontents",
        "volumegroupsnapshots",
    ] {
        let crd = format!("{kind}.{GROUP_SNAPSHOT}");
        want.push(row("breaking", &crd, "v1alpha1", "", "version-removed"));
        want.push(row("compatible", &crd, "v1beta1", "", "version-added"));
        let (class, change) = if kind == "volumegroupsnapshotclasses" {
            ("compatible", "storage-version-changed")
        } else {
            ("breaking", "storage-changed-without-conversion")
        };
        want.push(row(class, &crd, "", "spec.versions[*].storage", change));
    }
    release_pair("external-snapshotter", "v8.0.0", "v8.2.0", want);
}

/// v8.2.0 -> v8.4.0 (v8.3.0's CRDs are v8.2.0's): a new `v1beta2`, now the storage version,
/// and `v1beta1` deprecated; the notes call none of it breaking. VolumeGroupSnapshotContent
/// converts through a webhook; the other two move their storage with conversion `None`
/// between schemas that differ only in new immutability rules, which changes nothing stored
/// objects read as: compatible, and passes even `--fail-on tightening`.
#[test]
fn external_snapshotter_v8_2_to_v8_4_adds_a_version_compatibly() {
    let mut want = Vec::new();
    for kind in [
        "volumegroupsnapshotclasses",
        "volumegroupsnapshotcontents",
        "volumegroupsnapshots",
    ] {
        let crd = format!("{kind}.{GROUP_SNAPSHOT}");
        want.push(row(
            "compatible",
            &crd,
            "v1beta1",
            "deprecated",
            "version-deprecated",
        ));
        want.push(row("compatible", &crd, "v1beta2", "", "version-added"));
        want.push(row(
            "compatible",
            &crd,
            "",
            "spec.versions[*].storage",
            "storage-version-changed",
        ));
    }
    release_pair("external-snapshotter", "v8.2.0", "v8.4.0", want);
}

/// Input that would compare as "compatible" by mistake is refused (exit 2), naming the
/// problem: a baseline without a CRD (an empty file, as a wrong `git show` path gives, or
/// another object), the same CRD twice, a directory that links back into itself.
#[test]
fn a_baseline_that_cannot_be_compared_exits_2() {
    let dir = TempDir::new("silent");
    let current = testdata("gateway-api-standard/v1.3.0");
    let out_for = |baseline: &str| {
        run(
            &dir.0,
            &[
                "compat",
                "--baseline",
                baseline,
                "--current",
                current.to_str().unwrap(),
            ],
        )
    };
    write(&dir.0, "empty/crd.yaml", "");
    write(
        &dir.0,
        "other/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
    );
    for baseline in ["empty/crd.yaml", "empty", "other"] {
        let out = out_for(baseline);
        assert_eq!(out.status.code(), Some(2), "{baseline}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "error: no CustomResourceDefinition in `{baseline}`"
            )),
            "{}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "");
    }

    let grant = current.join("gateway.networking.k8s.io_referencegrants.yaml");
    let twice = dir.0.join("twice");
    std::fs::create_dir_all(twice.join("nested")).unwrap();
    std::fs::copy(&grant, twice.join("a.yaml")).unwrap();
    std::fs::copy(&grant, twice.join("nested/b.yaml")).unwrap();
    let out = out_for("twice");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "error: twice/nested/b.yaml, document 1: the CustomResourceDefinition `referencegrants.gateway.networking.k8s.io` is already in twice/a.yaml, document 1; give each CRD once"
        ),
        "{}",
        stderr(&out)
    );

    let looping = dir.0.join("looping");
    std::fs::create_dir_all(looping.join("crds")).unwrap();
    std::fs::copy(&grant, looping.join("crds/grant.yaml")).unwrap();
    std::os::unix::fs::symlink("..", looping.join("crds/up")).unwrap();
    let out = out_for("looping");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("error: `looping/crds/up` links back to `"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("a symbolic link loop"),
        "{}",
        stderr(&out)
    );

    // The same problems in `--current` are refused as well.
    let out = run(
        &dir.0,
        &[
            "compat",
            "--baseline",
            current.to_str().unwrap(),
            "--current",
            "empty",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no CustomResourceDefinition in `empty`"),
        "{}",
        stderr(&out)
    );
}

/// The text report starts each line with its class, breaking first, then tightening, then
/// compatible; the summary says how many of each and what the run failed on.
#[test]
fn the_text_report_orders_by_class() {
    let dir = TempDir::new("text");
    let set = testdata("gateway-api-experimental");
    let out = run(
        &dir.0,
        &[
            "compat",
            "--baseline",
            set.join("v1.1.0").to_str().unwrap(),
            "--current",
            set.join("v1.2.0").to_str().unwrap(),
            "--fail-on",
            "breaking",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let classes: Vec<&str> = text.lines().map(|l| l.split(':').next().unwrap()).collect();
    let mut want = vec!["breaking"; 6];
    want.push("tightening");
    assert_eq!(classes, want, "{text}");
    assert!(
        text.contains("tightening: backendlbpolicies.gateway.networking.k8s.io v1alpha2: spec.sessionPersistence: rule `"),
        "{text}"
    );
    assert!(
        stderr(&out).contains(
            "error: 7 changes, 6 breaking, 1 tightening, between 2 baseline and 2 current CRDs: failed on 6 breaking changes (`--fail-on breaking`)"
        ),
        "{}",
        stderr(&out)
    );
}
