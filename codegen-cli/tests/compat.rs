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
