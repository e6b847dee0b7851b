//! Helpers shared by the informer tests.

use std::time::Duration;

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
