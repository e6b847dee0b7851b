//! How long an informer waits after a failed list or watch, which failures need a new
//! list at once, and which are objects that do not decode (which waiting does not mend).

use std::time::Duration;

use kube::runtime::watcher;

/// The wait after a failed list or watch: `initial`, doubling up to `max`, each wait drawn
/// at random from its upper half so that informers do not retry in step. A 410 Gone is not
/// waited on: the informer lists again at once, as client-go's reflector does. A watch that
/// delivers an event starts over from `initial`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchBackoff {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for WatchBackoff {
    /// 200 ms, doubling up to 5 s.
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(200),
            max: Duration::from_secs(5),
        }
    }
}

/// The waits of one run of failures.
pub(crate) struct Retry {
    config: WatchBackoff,
    next: Duration,
    seed: u64,
}

impl Retry {
    pub(crate) fn new(config: WatchBackoff) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            | 1;
        Self {
            config,
            next: config.initial,
            seed,
        }
    }

    pub(crate) fn reset(&mut self) {
        self.next = self.config.initial;
    }

    /// The next wait: somewhere in the upper half of the current step.
    pub(crate) fn wait(&mut self) -> Duration {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let step = self.next.min(self.config.max);
        self.next = (step * 2).min(self.config.max);
        let half = step / 2;
        let nanos = half.as_nanos().max(1) as u64;
        half + Duration::from_nanos(self.seed % nanos)
    }
}

/// Whether a watcher error is a 410 Gone: the resource version is too old, and only a new
/// list helps.
pub(crate) fn is_gone(err: &watcher::Error) -> bool {
    let api_code = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 410);
    match err {
        watcher::Error::WatchError(status) => status.code == 410,
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => api_code(e),
        watcher::Error::NoResourceVersion => false,
    }
}

/// Why `err` is an object that does not decode as the informer's type, if it is: a list's
/// body (kube's `SerdeError`), or a watch event kube read as a `Status` of code 0 (kube-client
/// turns a line it cannot decode into an empty `Status`).
pub(crate) fn undecodable(err: &watcher::Error) -> Option<String> {
    let of = |e: &kube::Error| match e {
        kube::Error::SerdeError(e) => Some(e.to_string()),
        kube::Error::Api(s) if s.code == 0 && s.message.is_empty() => {
            Some("a watch event's object does not decode as this type".to_owned())
        }
        _ => None,
    };
    match err {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => of(e),
        watcher::Error::WatchError(s) if s.code == 0 && s.message.is_empty() => {
            Some("a watch event's object does not decode as this type".to_owned())
        }
        _ => None,
    }
}

/// `text`, cut to at most `max` bytes (on a character boundary) with `...` when cut: what
/// goes to the log of an error whose text may quote what the server sent.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap_each_in_the_upper_half_of_its_step() {
        let config = WatchBackoff {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(400),
        };
        let mut retry = Retry::new(config);
        for step in [100u64, 200, 400, 400, 400] {
            let wait = retry.wait();
            let step = Duration::from_millis(step);
            assert!(
                wait >= step / 2 && wait <= step,
                "{wait:?} for a step of {step:?}"
            );
        }
        retry.reset();
        assert!(retry.wait() <= Duration::from_millis(100));
    }

    #[test]
    fn only_410_counts_as_gone() {
        let status = |code| {
            kube::core::Status::failure("x", "Expired")
                .with_code(code)
                .boxed()
        };
        assert!(is_gone(&watcher::Error::WatchError(status(410))));
        assert!(!is_gone(&watcher::Error::WatchError(status(500))));
        let api = kube::Error::Api(status(410));
        assert!(is_gone(&watcher::Error::WatchStartFailed(api)));
        assert!(!is_gone(&watcher::Error::NoResourceVersion));
    }
}
