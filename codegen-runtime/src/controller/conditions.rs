//! Status conditions with `k8s.io/apimachinery`'s `meta.SetStatusCondition` rules, over
//! k8s-openapi's `Condition`: one condition per `type`; `lastTransitionTime` moves only when
//! the status changes; reason, message and `observedGeneration` follow the new condition.
//! Each setter says whether anything changed, so a status write can be skipped when
//! nothing did. A `lastTransitionTime` of the Unix epoch (what [`condition`] gives) stands
//! for Go's zero time: "now, when the status changes".

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// A condition of `type_` with `status` (`True`, `False`, `Unknown`), `reason`, `message`
/// and the generation it was observed at; its transition time is set when it is.
pub fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    observed_generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        observed_generation,
        last_transition_time: unset(),
    }
}

/// The time that stands for "not set".
fn unset() -> Time {
    Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
}

/// Sets `new` in `conditions`: added (with `lastTransitionTime` now when it has none), or
/// the condition of its type updated; `true` when something changed.
pub fn set_status_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let now = || Time(jiff_now());
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        None => {
            let mut new = new;
            if new.last_transition_time.0 == unset().0 {
                new.last_transition_time = now();
            }
            conditions.push(new);
            true
        }
        Some(existing) => {
            let mut changed = false;
            if existing.status != new.status {
                existing.status = new.status;
                existing.last_transition_time = if new.last_transition_time.0 == unset().0 {
                    now()
                } else {
                    new.last_transition_time
                };
                changed = true;
            }
            if existing.reason != new.reason {
                existing.reason = new.reason;
                changed = true;
            }
            if existing.message != new.message {
                existing.message = new.message;
                changed = true;
            }
            if existing.observed_generation != new.observed_generation {
                existing.observed_generation = new.observed_generation;
                changed = true;
            }
            changed
        }
    }
}

/// The condition of `type_`, if there is one.
pub fn find_status_condition<'a>(
    conditions: &'a [Condition],
    type_: &str,
) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Removes the condition of `type_`; `true` when there was one.
pub fn remove_status_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// Whether the condition of `type_` is there with status `True`.
pub fn is_status_condition_true(conditions: &[Condition], type_: &str) -> bool {
    find_status_condition(conditions, type_).is_some_and(|c| c.status == "True")
}

/// Now, to the second (what the API server keeps of a `Time`).
fn jiff_now() -> k8s_openapi::jiff::Timestamp {
    let now = k8s_openapi::jiff::Timestamp::now();
    k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(status: &str, reason: &str) -> Condition {
        super::condition("Ready", status, reason, "", Some(1))
    }

    #[test]
    fn the_transition_time_moves_only_when_the_status_does() {
        let mut conditions = Vec::new();
        assert!(set_status_condition(
            &mut conditions,
            condition("False", "Waiting")
        ));
        let first = conditions[0].last_transition_time.clone();
        assert_ne!(first.0, unset().0, "stamped");
        // The same again: nothing changes.
        assert!(!set_status_condition(
            &mut conditions,
            condition("False", "Waiting")
        ));
        // Another reason, same status: the time stays.
        let stamped = condition("False", "StillWaiting");
        assert!(set_status_condition(&mut conditions, stamped));
        assert_eq!(conditions[0].last_transition_time, first);
        assert_eq!(conditions[0].reason, "StillWaiting");
        // Another status: the new time.
        let mut ready = condition("True", "Done");
        let given = Time(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap());
        ready.last_transition_time = given.clone();
        assert!(set_status_condition(&mut conditions, ready));
        assert_eq!(
            conditions[0].last_transition_time, given,
            "the new condition's own time"
        );
        assert!(is_status_condition_true(&conditions, "Ready"));
        assert_eq!(conditions.len(), 1);
        assert!(remove_status_condition(&mut conditions, "Ready"));
        assert!(!remove_status_condition(&mut conditions, "Ready"));
        assert!(find_status_condition(&conditions, "Ready").is_none());
    }
}
