//! Objects the real server rejects: names by each kind's rule, `generateName`, labels,
//! annotations, owner references and finalizers, with the real code, reason, message and
//! `details.causes[].field`.

use serde_json::json;

use crate::env::{RUN_LABEL, case, run_id};

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn invalid(field: &str) -> Vec<(String, String)> {
    vec![("FieldValueInvalid".to_owned(), field.to_owned())]
}

fn object(name: &str, extra: serde_json::Value) -> String {
    let mut obj = json!({"metadata": {"name": name, "labels": {RUN_LABEL: run_id()}}});
    if let (Some(o), Some(e)) = (obj.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            if k == "metadata" {
                for (mk, mv) in v.as_object().unwrap() {
                    o["metadata"][mk] = mv.clone();
                }
            } else {
                o.insert(k.clone(), v.clone());
            }
        }
    }
    obj.to_string()
}

#[tokio::test]
async fn object_names_follow_each_kinds_rule() {
    case("names-rules", |env| async move {
        let cms = env.path("v1", "configmaps");
        let r = env
            .raw("POST", &cms, "application/json", &object("Bad_Name", json!({})))
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            format!("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": {SUBDOMAIN}")
        );
        assert_eq!(r.causes(), invalid("metadata.name"));
        assert_eq!(r.body["details"]["kind"], "ConfigMap");
        assert_eq!(r.body["details"]["name"], "Bad_Name");

        // Services are DNS labels: no dots.
        let svc = object("a.b", json!({"spec": {"ports": [{"port": 80}]}}));
        let r = env
            .raw("POST", &env.path("v1", "services"), "application/json", &svc)
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert!(
            r.message().contains("metadata.name: Invalid value: \"a.b\": must not contain dots"),
            "{}",
            r.message()
        );

        // A grouped kind says its group.
        let d = object("Bad_Name", json!({"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}));
        let r = env
            .raw("POST", &env.path("apps/v1", "deployments"), "application/json", &d)
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert!(r.message().starts_with("Deployment.apps \"Bad_Name\" is invalid: "));
        assert_eq!(r.body["details"]["group"], "apps");

        // RBAC names are path segments only: this one is fine there.
        let role = object("Mixed_Case.Name", json!({"rules": []}));
        let r = env
            .raw("POST", &env.path("rbac.authorization.k8s.io/v1", "roles"), "application/json", &role)
            .await;
        assert_eq!(r.code, 201, "{}", r.body);

        // Namespaces are DNS labels.
        let r = env
            .raw("POST", "/api/v1/namespaces", "application/json", &object("Bad_NS", json!({})))
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            format!("Namespace \"Bad_NS\" is invalid: metadata.name: Invalid value: \"Bad_NS\": {LABEL}")
        );

        let r = env
            .raw("POST", &cms, "application/json", &json!({"metadata": {}}).to_string())
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"
        );
        assert_eq!(
            r.causes(),
            [("FieldValueRequired".to_owned(), "metadata.name".to_owned())]
        );
    })
    .await;
}

#[tokio::test]
async fn generate_name_is_checked_as_a_prefix_and_the_name_it_gives() {
    case("generate-name", |env| async move {
        let cms = env.path("v1", "configmaps");
        let body = json!({"metadata": {"generateName": "Bad_"}}).to_string();
        let r = env.raw("POST", &cms, "application/json", &body).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.causes(),
            [
                (
                    "FieldValueInvalid".to_owned(),
                    "metadata.generateName".to_owned()
                ),
                ("FieldValueInvalid".to_owned(), "metadata.name".to_owned()),
            ]
        );
        // A trailing dash is fine in a prefix.
        let body = object(
            "",
            json!({"metadata": {"name": null, "generateName": "ok-"}}),
        );
        let r = env.raw("POST", &cms, "application/json", &body).await;
        assert_eq!(r.code, 201, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn labels_annotations_owners_and_finalizers_are_validated() {
    case("meta-rules", |env| async move {
        let cms = env.path("v1", "configmaps");
        let bad_labels = object("labels", json!({"metadata": {"labels": {"a/b/c": "x", "k": "-bad", RUN_LABEL: run_id()}}}));
        let r = env.raw("POST", &cms, "application/json", &bad_labels).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(r.causes(), invalid("metadata.labels"));
        assert!(r.message().contains("metadata.labels: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters"), "{}", r.message());
        assert!(r.message().contains("metadata.labels: Invalid value: \"-bad\": a valid label must be an empty string"), "{}", r.message());

        let bad_annotation = object("annotations", json!({"metadata": {"annotations": {"Bad Key": "x"}}}));
        let r = env.raw("POST", &cms, "application/json", &bad_annotation).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(r.causes(), invalid("metadata.annotations"));

        let big = object("big", json!({"metadata": {"annotations": {"a": "x".repeat(300_000)}}}));
        let r = env.raw("POST", &cms, "application/json", &big).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "ConfigMap \"big\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes"
        );
        assert_eq!(
            r.causes(),
            [("FieldValueTooLong".to_owned(), "metadata.annotations".to_owned())]
        );

        let owner = |name: &str, uid: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid, "controller": true});
        let two = object("owners", json!({"metadata": {"ownerReferences": [owner("a", "1"), owner("b", "2")]}}));
        let r = env.raw("POST", &cms, "application/json", &two).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(r.causes(), invalid("metadata.ownerReferences"));
        assert!(r.message().ends_with("Only one reference can have Controller set to true. Found \"true\" in references for ConfigMap/a and ConfigMap/b"), "{}", r.message());
        let no_uid = object("no-uid", json!({"metadata": {"ownerReferences": [owner("a", "")]}}));
        let r = env.raw("POST", &cms, "application/json", &no_uid).await;
        assert_eq!(r.causes(), invalid("metadata.ownerReferences.uid"));

        let finalizer = object("finalizer", json!({"metadata": {"finalizers": ["hold"]}}));
        let r = env.raw("POST", &cms, "application/json", &finalizer).await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(
            r.message(),
            "ConfigMap \"finalizer\" is invalid: metadata.finalizers[0]: Invalid value: \"hold\": name is neither a standard finalizer name nor is it fully qualified"
        );

        // Updates are checked too.
        let ok = object("ok", json!({}));
        assert_eq!(env.raw("POST", &cms, "application/json", &ok).await.code, 201);
        let r = env
            .raw(
                "PATCH",
                &format!("{cms}/ok"),
                "application/merge-patch+json",
                &json!({"metadata": {"labels": {"a/b/c": "x"}}}).to_string(),
            )
            .await;
        assert_eq!(r.status(), (422, "Invalid"));
        assert_eq!(r.causes(), invalid("metadata.labels"));
    })
    .await;
}

#[tokio::test]
async fn metadata_the_server_owns_cannot_be_changed() {
    case("immutable", |env| async move {
        let cms = env.path("v1", "configmaps");
        let r = env.raw("POST", &cms, "application/json", &object("cm", json!({}))).await;
        assert_eq!(r.code, 201, "{}", r.body);
        let uid = r.body["metadata"]["uid"].as_str().unwrap().to_owned();
        let created = r.body["metadata"]["creationTimestamp"].clone();
        let url = format!("{cms}/cm");

        // A PUT's uid is a precondition on the stored object.
        let mut other = r.body.clone();
        other["metadata"]["uid"] = json!("not-the-uid");
        let r = env.raw("PUT", &url, "application/json", &other.to_string()).await;
        assert_eq!(r.status(), (409, "Conflict"), "{}", r.body);
        assert_eq!(
            r.message(),
            format!(
                "Operation cannot be fulfilled on configmaps \"cm\": StorageError: invalid object, Code: 4, Key: /registry/configmaps/{}/cm, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: not-the-uid, UID in object meta: {uid}",
                env.ns
            )
        );

        // A patch that changes it is invalid; so is setting deletion fields.
        let merge = "application/merge-patch+json";
        let r = env.raw("PATCH", &url, merge, r#"{"metadata":{"uid":"y"}}"#).await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            "ConfigMap \"cm\" is invalid: metadata.uid: Invalid value: \"y\": field is immutable"
        );
        assert_eq!(r.causes(), invalid("metadata.uid"));
        let deleting = r#"{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z","deletionGracePeriodSeconds":5}}"#;
        let r = env.raw("PATCH", &url, merge, deleting).await;
        assert_eq!(r.status(), (422, "Invalid"), "{}", r.body);
        assert_eq!(
            r.message(),
            "ConfigMap \"cm\" is invalid: [metadata.deletionTimestamp: Invalid value: \"2026-01-01T00:00:00Z\": field is immutable, metadata.deletionGracePeriodSeconds: Invalid value: 5: field is immutable]"
        );

        // The creation time is silently kept.
        let r = env
            .raw("PATCH", &url, merge, r#"{"metadata":{"creationTimestamp":"2020-01-01T00:00:00Z"}}"#)
            .await;
        assert_eq!(r.code, 200, "{}", r.body);
        assert_eq!(r.body["metadata"]["creationTimestamp"], created);
    })
    .await;
}
