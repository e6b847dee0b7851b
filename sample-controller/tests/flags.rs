//! The binary's one configuration surface: every flag in `--help` with the environment
//! variable it falls back to, and those variables read when the flag is absent.

use std::process::Command;

fn sample_controller() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sample-controller"));
    for var in [
        "KUBECONFIG",
        "EMBEDDED",
        "WEBHOOK_ADDR",
        "INSTALL_WEBHOOKS",
        "KUBE_API_QPS",
        "KUBE_API_BURST",
        "KUBE_API_LIMIT_PER_GROUP_VERSION",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

#[test]
fn help_lists_every_flag_with_its_environment_variable() {
    let out = sample_controller().arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for (flag, var) in [
        ("--kubeconfig", "KUBECONFIG"),
        ("--embedded", "EMBEDDED"),
        ("--leader-elect", "LEADER_ELECT"),
        ("--cold-standby", "COLD_STANDBY"),
        ("--health-addr", "HEALTH_ADDR"),
        ("--metrics-addr", "METRICS_ADDR"),
        ("--webhook-addr", "WEBHOOK_ADDR"),
        ("--cert-dir", "WEBHOOK_CERT_DIR"),
        ("--install-webhooks", "INSTALL_WEBHOOKS"),
        ("--namespace", "WATCH_NAMESPACE"),
        ("--shutdown-deadline", "SHUTDOWN_DEADLINE"),
        ("--reconcile-timeout", "RECONCILE_TIMEOUT"),
        ("--kube-api-qps", "KUBE_API_QPS"),
        ("--kube-api-burst", "KUBE_API_BURST"),
        (
            "--kube-api-limit-per-group-version",
            "KUBE_API_LIMIT_PER_GROUP_VERSION",
        ),
    ] {
        // Each flag's entry runs from its line to the next flag's.
        let entry = help
            .split("\n      --")
            .find(|e| e.split([' ', '\n']).next() == Some(&flag[2..]))
            .unwrap_or_else(|| panic!("{flag} in:\n{help}"));
        assert!(entry.contains(&format!("[env: {var}")), "{flag}: {entry}");
    }
}

#[test]
fn switches_are_read_from_the_environment() {
    // INSTALL_WEBHOOKS=1 (the development switch) without an address is refused by name,
    // which shows the variable was read; the old flag name still parses.
    let out = sample_controller()
        .env("INSTALL_WEBHOOKS", "1")
        .args(["--webhook-cert-dir", "/tmp/unused"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--install-webhooks (INSTALL_WEBHOOKS) needs --webhook-addr"),
        "{err}"
    );
    // INSTALL_WEBHOOKS=0 is off, so nothing is missing: the embedded demo runs (EMBEDDED=yes).
    let out = sample_controller()
        .env("INSTALL_WEBHOOKS", "0")
        .env("EMBEDDED", "yes")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("embedded in-memory API server"), "{stdout}");
}

#[test]
fn a_burst_needs_a_qps() {
    // The rate limit is opt-in: a burst alone (here from the environment) limits nothing,
    // so it is refused rather than ignored.
    let out = sample_controller()
        .env("KUBE_API_BURST", "20")
        .arg("--print-crds")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--kube-api-qps"), "{err}");
}
