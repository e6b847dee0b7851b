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
