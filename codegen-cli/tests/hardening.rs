//! Regressions from adversarial probes of the CLI: each case crashed, wrote half a tree,
//! dropped input in silence or depended on how a path was typed before it was fixed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

mod support;

use support::{TempDir, run, stderr, write};

fn generate(cwd: &Path) -> Output {
    run(
        cwd,
        &["generate", "--input", "apis", "--output", "generated"],
    )
}

/// A kind in `apis/<group>/v1/<file>.rs`, declared in the version's `mod.rs`.
fn kind(root: &Path, group: &str, file: &str, kind: &str) {
    write(
        root,
        &format!("apis/{group}/v1/mod.rs"),
        &format!("//! +groupName=widgets.example.com\npub mod r#{file};\n"),
    );
    write(
        root,
        &format!("apis/{group}/v1/{file}.rs"),
        &format!(
            "/// +genclient\n#[kube(group = \"widgets.example.com\", version = \"v1\", kind = \"{kind}\", namespaced, plural = \"xs\")]\npub struct Spec {{}}\n"
        ),
    );
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_raw_identifier_kind_is_a_diagnostic_not_a_panic() {
    let tmp = TempDir::new("raw-kind");
    kind(&tmp.0, "widgets", "thing", "r#type");
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`r#type` is not a valid Rust type name"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn keyword_directories_are_raw_modules_and_impossible_ones_are_reported() {
    let tmp = TempDir::new("keywords");
    kind(&tmp.0, "type", "async", "Widget");
    let out = generate(&tmp.0);
    assert!(out.status.success(), "{}", stderr(&out));
    let crds = fs::read_to_string(tmp.0.join("generated/crds.rs")).unwrap();
    assert!(
        crds.contains("crate::apis::r#type::v1::r#async::Widget"),
        "{crds}"
    );

    let tmp = TempDir::new("bad-dir");
    kind(&tmp.0, "my-group", "widget", "Widget");
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "directory `my-group` cannot be a Rust module: `my-group` is not a Rust identifier"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn generics_nested_too_deep_are_a_diagnostic_not_a_stack_overflow() {
    let tmp = TempDir::new("deep");
    kind(&tmp.0, "widgets", "widget", "Widget");
    let deep = format!(
        "pub struct Deep {{ pub x: {}u8{} }}\n",
        "Vec<".repeat(300),
        ">".repeat(300)
    );
    write(&tmp.0, "apis/widgets/v1/deep.rs", &deep);
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("brackets nest more than 128 levels deep at line 1, column 537"),
        "{}",
        stderr(&out)
    );
    // Within the limit, the debug build parses it (on its own large stack).
    let ok = format!(
        "pub struct Deep {{ pub x: {}u8{} }}\n",
        "Vec<".repeat(120),
        ">".repeat(120)
    );
    write(&tmp.0, "apis/widgets/v1/deep.rs", &ok);
    let out = generate(&tmp.0);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn symlinked_directories_are_read_and_unreadable_files_are_named() {
    let tmp = TempDir::new("links");
    kind(&tmp.0, "real", "widget", "Widget");
    fs::create_dir_all(tmp.0.join("apis")).unwrap();
    fs::rename(tmp.0.join("apis/real"), tmp.0.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(tmp.0.join("elsewhere"), tmp.0.join("apis/widgets")).unwrap();
    let out = generate(&tmp.0);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tmp.0.join("generated/widgets/v1/widget.rs").exists());

    std::os::unix::fs::symlink(
        tmp.0.join("nowhere.rs"),
        tmp.0.join("apis/widgets/v1/gone.rs"),
    )
    .unwrap();
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot read `apis/widgets/v1/gone.rs`")
            && stderr(&out).contains("a dangling symbolic link"),
        "{}",
        stderr(&out)
    );
    fs::remove_file(tmp.0.join("apis/widgets/v1/gone.rs")).unwrap();
    fs::write(tmp.0.join("apis/widgets/v1/latin1.rs"), b"// caf\xe9\n").unwrap();
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot read `apis/widgets/v1/latin1.rs`: not UTF-8 (byte 6)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn go_style_line_comment_markers_are_read_and_stray_ones_reported() {
    let tmp = TempDir::new("line-comments");
    write(
        &tmp.0,
        "apis/widgets/v1/mod.rs",
        "// +groupName=widgets.example.com\n\npub mod widget;\n",
    );
    write(
        &tmp.0,
        "apis/widgets/v1/widget.rs",
        "// +genclient\n// +genclient:readonly\n#[kube(group = \"widgets.example.com\", version = \"v1\", kind = \"Widget\", namespaced)]\npub struct WidgetSpec {\n    // +kubebuilder:validation:Minimum=1\n    pub size: i32,\n}\n",
    );
    let out = generate(&tmp.0);
    assert!(out.status.success(), "{}", stderr(&out));
    let client = fs::read_to_string(tmp.0.join("generated/widgets/v1/widget.rs")).unwrap();
    assert!(
        client.contains("verbs::Get for WidgetVerbs")
            && !client.contains("verbs::Create for WidgetVerbs"),
        "readonly: {client}"
    );
    let crds = fs::read_to_string(tmp.0.join("generated/widgets/v1/widget.rs")).unwrap();
    assert!(crds.contains("\"minimum\":1"), "{crds}");

    write(
        &tmp.0,
        "apis/widgets/v1/widget.rs",
        "#[kube(group = \"widgets.example.com\", version = \"v1\", kind = \"Widget\", namespaced)]\npub struct WidgetSpec {\n    pub size: i32,\n    // +kubebuilder:validation:Minimum=1\n}\n",
    );
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "line 4: `// +kubebuilder:validation:Minimum=1` is not directly above an item or field"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_the_crate_does_not_declare_is_reported() {
    let tmp = TempDir::new("undeclared");
    kind(&tmp.0, "widgets", "widget", "Widget");
    write(
        &tmp.0,
        "apis/widgets/v1/mod.rs",
        "//! +groupName=widgets.example.com\n",
    );
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "`widgets/v1/widget` is not declared in `widgets/v1/mod.rs` (add `pub mod widget;`)"
        ),
        "{}",
        stderr(&out)
    );
    write(
        &tmp.0,
        "apis/widgets/v1/mod.rs",
        "//! +groupName=widgets.example.com\nmod widget;\n",
    );
    let out = generate(&tmp.0);
    assert!(
        stderr(&out).contains("`mod widget;` in `widgets/v1/mod.rs` is private"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_failed_removal_after_new_files_are_in_place_restores_everything() {
    let tmp = TempDir::new("rollback");
    kind(&tmp.0, "widgets", "widget", "Widget");
    write(
        &tmp.0,
        "apis/gadgets/v1/mod.rs",
        "//! +groupName=gadgets.example.com\npub mod gadget;\n",
    );
    write(
        &tmp.0,
        "apis/gadgets/v1/gadget.rs",
        "/// +genclient\n#[kube(group = \"gadgets.example.com\", version = \"v1\", kind = \"Gadget\", namespaced)]\npub struct GadgetSpec {}\n",
    );
    assert!(generate(&tmp.0).status.success());
    let before = snapshot(&tmp.0.join("generated"));
    // Gadget goes away (its files become stale) and Widget changes.
    fs::remove_dir_all(tmp.0.join("apis/gadgets")).unwrap();
    write(
        &tmp.0,
        "apis/widgets/v1/widget.rs",
        &fs::read_to_string(tmp.0.join("apis/widgets/v1/widget.rs"))
            .unwrap()
            .replace("/// +genclient", "/// +genclient\n/// +genclient:readonly"),
    );
    // Something in the way of moving one stale file aside: the removal fails.
    // (A file is moved aside under its whole name and `.kube-codegen-old`.)
    let aside = tmp
        .0
        .join("generated/gadgets/v1/gadget.rs.kube-codegen-old");
    fs::create_dir_all(aside.join("x")).unwrap();
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    fs::remove_dir_all(&aside).unwrap();
    assert_eq!(
        snapshot(&tmp.0.join("generated")),
        before,
        "the tree was restored"
    );
}

#[test]
fn a_failure_while_staging_leaves_no_new_directories() {
    let tmp = TempDir::new("staging");
    kind(&tmp.0, "widgets", "widget", "Widget");
    // The staged `mod.rs` of a later group cannot be written.
    write(
        &tmp.0,
        "apis/zeta/v1/mod.rs",
        "//! +groupName=zeta.example.com\npub mod zed;\n",
    );
    write(
        &tmp.0,
        "apis/zeta/v1/zed.rs",
        "/// +genclient\n#[kube(group = \"zeta.example.com\", version = \"v1\", kind = \"Zed\", namespaced)]\npub struct ZedSpec {}\n",
    );
    fs::create_dir_all(tmp.0.join("generated/zeta/v1/zed.rs.kube-codegen-tmp/x")).unwrap();
    let out = generate(&tmp.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    // Only what was there before: the obstacle.
    let left = snapshot(&tmp.0.join("generated"));
    assert!(left.is_empty(), "{left:?}");
    assert!(!tmp.0.join("generated/widgets").exists());
}

#[test]
fn verify_does_not_depend_on_how_paths_are_spelled_or_where_it_runs() {
    let tmp = TempDir::new("spelling");
    fs::write(tmp.0.join("Cargo.toml"), "[workspace]\n").unwrap();
    kind(&tmp.0, "widgets", "widget", "Widget");
    assert!(generate(&tmp.0).status.success());
    let abs_in = tmp.0.join("apis");
    let abs_out = tmp.0.join("generated");
    for (cwd, input, output) in [
        (tmp.0.clone(), "./apis/".to_owned(), "generated/".to_owned()),
        (
            tmp.0.join("apis"),
            ".".to_owned(),
            "../generated".to_owned(),
        ),
        (
            std::env::temp_dir(),
            abs_in.display().to_string(),
            abs_out.display().to_string(),
        ),
    ] {
        let out = run(&cwd, &["verify", "--input", &input, "--output", &output]);
        assert!(
            out.status.success(),
            "{input} {output} from {}: {}",
            cwd.display(),
            stderr(&out)
        );
    }
    let header = fs::read_to_string(abs_out.join("mod.rs")).unwrap();
    assert!(
        header.contains("Regenerate with: kube-codegen generate --input apis --output generated\n"),
        "{header}"
    );
}

#[test]
fn verify_help_does_not_offer_writing() {
    let out = run(Path::new("."), &["verify", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        !help.contains("  --verify") && !help.contains("are removed"),
        "{help}"
    );
}

#[test]
fn a_failed_rbac_write_leaves_the_old_file_and_nothing_else() {
    let tmp = TempDir::new("rbac-write");
    write(
        &tmp.0,
        "src/controller.rs",
        "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list\n",
    );
    write(&tmp.0, "out/role.yaml", "old contents\n");
    // Moving the old file aside cannot work: its backup's place is taken.
    fs::create_dir_all(tmp.0.join("out/role.yaml.kube-codegen-old/x")).unwrap();
    let out = run(
        &tmp.0,
        &[
            "rbac",
            "--input",
            "src",
            "--output",
            "out/role.yaml",
            "--name",
            "demo",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(tmp.0.join("out/role.yaml")).unwrap(),
        "old contents\n"
    );
    assert!(!tmp.0.join("out/role.yaml.kube-codegen-tmp").exists());

    // A failure after the parent directories were created (the staged file's name is too
    // long for the file system) removes those directories again.
    let long = format!("deep/er/{}.yaml", "r".repeat(250));
    let out = run(
        &tmp.0,
        &[
            "rbac", "--input", "src", "--output", &long, "--name", "demo",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert!(!tmp.0.join("deep").exists());

    // Into directories that do not exist yet, it works and creates them.
    let out = run(
        &tmp.0,
        &[
            "rbac",
            "--input",
            "src",
            "--output",
            "new/dir/role.yaml",
            "--name",
            "demo",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let yaml = fs::read_to_string(tmp.0.join("new/dir/role.yaml")).unwrap();
    assert!(yaml.contains("deployments"), "{yaml}");
}

#[test]
fn a_package_apply_marker_does_not_promise_a_derive_kind_what_its_derive_cannot_see() {
    let tmp = TempDir::new("package-ac");
    write(
        &tmp.0,
        "apis/widgets/v1/mod.rs",
        "//! +groupName=widgets.example.com\n//! +kubebuilder:ac:generate=true\npub mod gadget;\npub mod widget;\n",
    );
    // Expanded in place by the derive, which reads only the type's own attributes.
    write(
        &tmp.0,
        "apis/widgets/v1/gadget.rs",
        "#[derive(CustomResource, GenClient)]\n#[kube(group = \"widgets.example.com\", version = \"v1\", kind = \"Gadget\", namespaced)]\npub struct GadgetSpec {}\n",
    );
    // Written by the CLI, which reads the package marker.
    write(
        &tmp.0,
        "apis/widgets/v1/widget.rs",
        "/// +genclient\n#[kube(group = \"widgets.example.com\", version = \"v1\", kind = \"Widget\", namespaced)]\npub struct WidgetSpec {}\n",
    );
    let out = generate(&tmp.0);
    assert!(out.status.success(), "{}", stderr(&out));
    let module = fs::read_to_string(tmp.0.join("generated/widgets/v1/mod.rs")).unwrap();
    assert!(
        tmp.0
            .join("generated/widgets/v1/applyconfigurations/widget.rs")
            .exists()
    );
    assert!(!module.contains("GadgetApplyConfiguration"), "{module}");
    assert!(module.contains("GadgetClient"), "{module}");
}

#[test]
fn rbac_on_an_unreadable_input_says_why_and_writes_nothing() {
    let tmp = TempDir::new("rbac-unreadable");
    write(
        &tmp.0,
        "src/controller.rs",
        "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n",
    );
    fs::write(tmp.0.join("src/latin1.rs"), b"// caf\xe9\n").unwrap();
    let out = run(
        &tmp.0,
        &[
            "rbac",
            "--input",
            "src",
            "--output",
            "out/role.yaml",
            "--name",
            "demo",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: cannot read `src") && err.contains("UTF-8"),
        "the cause, with the path: {err}"
    );
    assert!(!tmp.0.join("out").exists(), "nothing written");

    let out = run(
        &tmp.0,
        &[
            "rbac",
            "--input",
            "gone",
            "--output",
            "role.yaml",
            "--name",
            "demo",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("error: cannot read `gone`: "),
        "{}",
        stderr(&out)
    );
}
