//! Expected messages are what kube-apiserver 1.36.2 answered for the same schema and objects.

use serde_json::{Value, json};

use super::*;

fn rules() -> Rules {
    let schema: Value = serde_json::from_str(include_str!("gadget-schema.json")).unwrap();
    Rules::compile(&schema).expect("the schema has rules")
}

fn gadget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "contract.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec})
}

fn run(new: &Value, old: Option<&Value>) -> (Vec<String>, Vec<String>) {
    let (mut errors, mut warnings) = (Vec::new(), Vec::new());
    rules().validate(new, old, &mut errors, &mut warnings);
    (errors.iter().map(ToString::to_string).collect(), warnings)
}

#[test]
fn failing_rules_read_as_on_the_real_server() {
    let cases = [
        (
            json!({"minReplicas": 5, "maxReplicas": 2}),
            "spec: Invalid value: minReplicas must not exceed maxReplicas",
        ),
        (
            json!({"mode": "off", "minReplicas": 0, "maxReplicas": 2}),
            "spec: Invalid value: mode off needs maxReplicas 0",
        ),
        (
            json!({"tier": "gold"}),
            "spec.tier: Forbidden: tier must start with t",
        ),
        (
            json!({"extra": {"note": "x"}}),
            "spec: Invalid value: \"object\": no such key: count evaluating rule: !has(self.extra) || self.extra.count > 0",
        ),
        (
            json!({"labels": {"a": "-x", "b": "ok"}}),
            "spec.labels[a]: Invalid value: \"-x\": label values must not start with a dash",
        ),
        (
            json!({"tags": ["ok", "Bad"]}),
            "spec.tags: Invalid value: tags are lower-case letters",
        ),
        (
            json!({"ports": [{"name": "a", "port": 0}]}),
            "spec.ports[0]: Invalid value: port out of range",
        ),
    ];
    for (spec, want) in cases {
        let mut spec = spec;
        for (k, v) in [("minReplicas", 1), ("maxReplicas", 3)] {
            spec.as_object_mut().unwrap().entry(k).or_insert(json!(v));
        }
        let (errors, _) = run(&gadget("g", spec.clone()), None);
        assert_eq!(errors, vec![want.to_owned()], "{spec}");
    }
    let (errors, _) = run(
        &gadget(&"g".repeat(41), json!({"minReplicas": 1, "maxReplicas": 1})),
        None,
    );
    assert_eq!(errors, vec!["<nil>: Invalid value: name too long"]);
}

#[test]
fn transition_rules_need_an_old_value_and_optional_old_self_runs_on_create() {
    let old = gadget(
        "g",
        json!({"minReplicas": 1, "maxReplicas": 1, "group": "a", "size": 5,
        "ports": [{"name": "http", "port": 80}]}),
    );
    let mut new = old.clone();
    new["spec"]["group"] = json!("b");
    new["spec"]["size"] = json!(4);
    new["spec"]["ports"] = json!([{"name": "web", "port": 81}, {"name": "http", "port": 8080}]);
    let (errors, _) = run(&new, Some(&old));
    assert_eq!(
        errors,
        vec![
            "spec.group: Invalid value: \"b\": group is immutable",
            "spec.ports[1]: Invalid value: a port's number is immutable",
            "spec.size: Invalid value: 4: size may only grow",
        ]
    );
    // On create there is no old value: `self == oldSelf` is not run, the optional one is.
    let (errors, _) = run(&new, None);
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn unchanged_invalid_values_ratchet_into_warnings() {
    let old = gadget(
        "g",
        json!({"minReplicas": 5, "maxReplicas": 2, "tags": ["Bad"], "mode": "x"}),
    );
    let mut new = old.clone();
    new["spec"]["tier"] = json!("t1");
    let (errors, warnings) = run(&new, Some(&old));
    // spec changed, so its own rule still fails; the unchanged tags only warn.
    assert_eq!(
        errors,
        vec!["spec: Invalid value: minReplicas must not exceed maxReplicas"]
    );
    assert_eq!(
        warnings,
        vec!["spec.tags: Invalid value: tags are lower-case letters"]
    );
}

#[test]
fn rules_that_do_not_compile_are_refused_as_at_crd_creation() {
    // A CRD with nine bad rules, and the message kube-apiserver 1.36.2 refused it with.
    let crd: Value = serde_json::from_str(include_str!("bad-rules-crd.json")).unwrap();
    let want: String = serde_json::from_str(include_str!("bad-rules-message.json")).unwrap();
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let errors = check::crd_rules(schema, "spec.validation.openAPIV3Schema");
    let got = format!(
        "CustomResourceDefinition.apiextensions.k8s.io \"bads.cel.example.com\" is invalid: {}",
        crate::field::aggregate(&errors)
    );
    // The real server visits sibling properties in Go's map order: compare as sets.
    let split = |m: &str| {
        let (head, list) = m.split_once(" is invalid: [").unwrap();
        let mut v: Vec<String> = list
            .split(", spec.validation")
            .map(|x| x.trim_start_matches("spec.validation").to_owned())
            .collect();
        v.push(head.to_owned());
        v.sort();
        v
    };
    assert_eq!(split(&got), split(&want));
}

#[test]
fn rule_costs_are_limited_as_at_crd_creation() {
    // Schemas with rules of every cost shape, and what kube-apiserver 1.36.2 said of each.
    let cases: Vec<Value> = serde_json::from_str(include_str!("cost-cases.json")).unwrap();
    let mut wrong = Vec::new();
    for case in &cases {
        let errors = check::crd_rules(&case["schema"], "spec.validation.openAPIV3Schema");
        let got = (!errors.is_empty()).then(|| {
            format!(
                "CustomResourceDefinition.apiextensions.k8s.io \"costs.cost.example.com\" is invalid: {}",
                crate::field::aggregate(&errors)
            )
        });
        if got.as_deref() != case["message"].as_str() {
            wrong.push(format!(
                "{}:\n  got  {got:?}\n  want {}",
                case["name"], case["message"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
