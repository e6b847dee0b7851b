//! How long a failed key waits before it is tried again: client-go's default controller
//! rate limiter, the larger of a per-key exponential backoff (5 ms doubling to 1000 s, reset
//! when the key succeeds) and an overall token bucket (10 a second, bursts of 100) that
//! keeps a storm of failures from flooding the API server.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

/// The rate limiter's settings; [`Backoff::default`] is client-go's
/// `DefaultControllerRateLimiter`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first wait after a failure; each further failure of the key doubles it.
    pub base: Duration,
    /// The longest wait of one key.
    pub max: Duration,
    /// Requeues a second, over every key (the bucket's refill rate; 0 turns it off).
    pub qps: f64,
    /// How many requeues may come at once before `qps` applies.
    pub burst: u32,
}

impl Default for Backoff {
    /// 5 ms doubling to 1000 s per key, at most 10 a second (bursts of 100) over all.
    fn default() -> Self {
        Self {
            base: Duration::from_millis(5),
            max: Duration::from_secs(1000),
            qps: 10.0,
            burst: 100,
        }
    }
}

/// The per-key failure counts and the shared bucket.
#[derive(Debug)]
pub(crate) struct RateLimiter<K> {
    config: Backoff,
    failures: HashMap<K, u32>,
    /// Tokens in the bucket as of `last`.
    tokens: f64,
    last: Instant,
}

impl<K: Eq + Hash + Clone> RateLimiter<K> {
    pub(crate) fn new(config: Backoff) -> Self {
        Self {
            config,
            failures: HashMap::new(),
            tokens: f64::from(config.burst),
            last: Instant::now(),
        }
    }

    /// The wait before `key` is tried again after a failure (counting it): the larger of
    /// its own backoff and the bucket's.
    pub(crate) fn when(&mut self, key: &K, now: Instant) -> Duration {
        let n = self.failures.entry(key.clone()).or_default();
        let exponent = *n;
        *n = n.saturating_add(1);
        let per_key = 2f64
            .powi(i32::try_from(exponent).unwrap_or(i32::MAX))
            .mul_add(self.config.base.as_secs_f64(), 0.0);
        let per_key = if per_key.is_finite() && per_key < self.config.max.as_secs_f64() {
            Duration::from_secs_f64(per_key)
        } else {
            self.config.max
        };
        per_key.max(self.reserve(now))
    }

    /// Takes a token from the bucket, as Go's `rate.Limiter.Reserve` does: no wait while it
    /// holds one, else the time until one is there (tokens go negative: later reservations
    /// wait longer).
    fn reserve(&mut self, now: Instant) -> Duration {
        if self.config.qps <= 0.0 {
            return Duration::ZERO;
        }
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * self.config.qps).min(f64::from(self.config.burst));
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.config.qps)
        }
    }

    /// Forgets `key`'s failures (it succeeded, or is gone).
    pub(crate) fn forget(&mut self, key: &K) {
        self.failures.remove(key);
    }

    /// How many times `key` failed since it last succeeded.
    pub(crate) fn requeues(&self, key: &K) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_backs_off_exponentially_to_its_cap_and_starts_over_when_forgotten() {
        let config = Backoff {
            qps: 0.0,
            ..Backoff::default()
        };
        let mut limiter = RateLimiter::new(config);
        let now = Instant::now();
        let waits: Vec<Duration> = (0..5).map(|_| limiter.when(&"a", now)).collect();
        let ms = |n| Duration::from_millis(n);
        assert_eq!(waits, [ms(5), ms(10), ms(20), ms(40), ms(80)]);
        // Another key has its own count.
        assert_eq!(limiter.when(&"b", now), ms(5));
        for _ in 0..40 {
            limiter.when(&"a", now);
        }
        assert_eq!(limiter.when(&"a", now), Duration::from_secs(1000));
        assert_eq!(limiter.requeues(&"a"), 46);
        limiter.forget(&"a");
        assert_eq!(limiter.requeues(&"a"), 0);
        assert_eq!(limiter.when(&"a", now), ms(5));
    }

    #[test]
    fn the_bucket_lets_a_burst_through_then_spaces_requeues_at_its_rate() {
        let config = Backoff {
            base: Duration::ZERO,
            qps: 10.0,
            burst: 100,
            ..Backoff::default()
        };
        let mut limiter = RateLimiter::new(config);
        let now = Instant::now();
        for i in 0..100 {
            assert_eq!(limiter.when(&i, now), Duration::ZERO, "within the burst");
        }
        // Then one every 100 ms, each later than the one before.
        let ms = |d: Duration| (d.as_secs_f64() * 1000.0).round() as u64;
        assert_eq!(ms(limiter.when(&100, now)), 100);
        assert_eq!(ms(limiter.when(&101, now)), 200);
        // 100 ms later one token came, but two were owed: the next still waits.
        let later = now + Duration::from_millis(100);
        let waits: Vec<u64> = (102..104).map(|i| ms(limiter.when(&i, later))).collect();
        assert_eq!(waits, [200, 300]);
        // Two seconds on, the bucket has refilled past the debt.
        assert_eq!(ms(limiter.when(&104, now + Duration::from_secs(2))), 0);
    }
}
