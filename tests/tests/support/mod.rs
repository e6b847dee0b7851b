//! Helpers shared by the informer tests.

use std::time::Duration;

use fake_apiserver::FakeApiServer;
use serde_json::json;

/// A fake API server with namespaces `a` and `b` and nothing in them: no
/// `kube-root-ca.crt` ConfigMap in each, so cases can count every ConfigMap they see.
pub fn fake() -> FakeApiServer {
    let fake = FakeApiServer::with_config(fake_apiserver::Config {
        namespace_defaults: false,
        ..Default::default()
    });
    for ns in ["a", "b"] {
        fake.seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}))
            .unwrap();
    }
    fake
}

/// Waits until `condition` holds, checking every 50 ms; panics naming `what` after 20 s.
pub async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..400 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within 20s");
}
