//! The manifests in `artifacts/` are accepted by an API server as they are.

#[test]
fn manifests_apply_unchanged() {
    let server = fake_apiserver::FakeApiServer::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts");
    let mut applied = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        applied += server.seed_yaml(&text).unwrap().len();
    }
    assert!(applied >= 4, "{applied} objects applied");
}
