//! Field ownership as kube-apiserver records it in `managedFields`: co-ownership of equal
//! values, per-item ownership of keyed lists and sets, conflicts worded as the real server
//! words them, `force`, removal of what an applier stops applying, updates owning what they
//! changed, and the scale subresource. The expected `fieldsV1` come from
//! `shared/testdata/real-apiserver` (recorded on kube-apiserver 1.36.2).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use crate::env::{RUN_LABEL, case, run_id, status};

/// `(operation, subresource, has time, fieldsV1)` of `manager`'s entry.
fn entry(obj: &impl serde::Serialize, manager: &str) -> Option<(String, String, bool, Value)> {
    let v = serde_json::to_value(obj).unwrap();
    v.pointer("/metadata/managedFields")?
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager)
        .map(|e| {
            (
                e["operation"].as_str().unwrap_or("").to_owned(),
                e["subresource"].as_str().unwrap_or("").to_owned(),
                e.get("time").is_some(),
                e["fieldsV1"].clone(),
            )
        })
}

fn fields(obj: &impl serde::Serialize, manager: &str) -> Value {
    entry(obj, manager).map_or(Value::Null, |e| e.3)
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": data})
}

#[tokio::test]
async fn equal_values_are_co_owned_and_conflicts_name_the_owner() {
    case("ssa-co-own", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        let apply = |who: &'static str, data: Value, force: bool| {
            let cms = cms.clone();
            async move {
                let mut pp = PatchParams::apply(who);
                pp.force = force;
                cms.patch("shared", &pp, &Patch::Apply(cm(data))).await
            }
        };
        apply("manager-a", json!({"k": "v", "onlya": "x"}), false)
            .await
            .unwrap();
        let after_b = apply("manager-b", json!({"k": "v"}), false).await.unwrap();
        // b applied what was there: no change, so b has an entry without a time.
        assert_eq!(
            entry(&after_b, "manager-b"),
            Some((
                "Apply".into(),
                String::new(),
                false,
                json!({"f:data": {"f:k": {}}})
            ))
        );
        assert_eq!(
            fields(&after_b, "manager-a"),
            json!({"f:data": {"f:k": {}, "f:onlya": {}}})
        );

        // b stops applying k: a still owns it, so it stays.
        let dropped = apply("manager-b", json!({}), false).await.unwrap();
        assert_eq!(dropped.data.as_ref().unwrap()["k"], "v");
        assert_eq!(fields(&dropped, "manager-b"), json!({"f:data": {}}));

        let err = status(
            apply("manager-c", json!({"k": "other"}), false)
                .await
                .unwrap_err(),
        );
        assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"manager-a\": .data.k"
        );
        let cause = &err.details.unwrap().causes[0];
        assert_eq!(
            (
                cause.reason.as_str(),
                cause.message.as_str(),
                cause.field.as_str()
            ),
            (
                "FieldManagerConflict",
                "conflict with \"manager-a\"",
                ".data.k"
            )
        );

        let forced = apply("manager-c", json!({"k": "other"}), true)
            .await
            .unwrap();
        assert_eq!(forced.data.as_ref().unwrap()["k"], "other");
        assert_eq!(
            fields(&forced, "manager-a"),
            json!({"f:data": {"f:onlya": {}}})
        );
        assert_eq!(fields(&forced, "manager-c"), json!({"f:data": {"f:k": {}}}));
        assert_eq!(fields(&forced, "manager-b"), json!({"f:data": {}}));
    })
    .await;
}

fn dep_a() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                 "env": [{"name": "MODE", "value": "prod"}]}]}}}})
}

fn dep_b(extra: bool) -> Value {
    let env = if extra {
        json!([{"name": "EXTRA", "value": "1"}])
    } else {
        json!(null)
    };
    let mut nginx = json!({"name": "nginx"});
    if extra {
        nginx["env"] = env;
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "annotations": {"owner-b": "yes"}},
        "spec": {"template": {"spec": {"containers": [nginx, {"name": "sidecar", "image": "busybox:1.36"}]}}}})
}

#[tokio::test]
async fn keyed_lists_are_owned_item_by_item() {
    case("ssa-keyed", |env| async move {
        let deployments: Api<Deployment> = env.api();
        let apply = |who: &'static str, body: Value, force: bool| {
            let d = deployments.clone();
            async move {
                let mut pp = PatchParams::apply(who);
                pp.force = force;
                d.patch("web", &pp, &Patch::Apply(body)).await
            }
        };
        apply("manager-a", dep_a(), false).await.unwrap();
        let both = apply("manager-b", dep_b(true), false).await.unwrap();
        // The entries kube-apiserver 1.36.2 recorded for the same two applies.
        assert_eq!(
            fields(&both, "manager-a"),
            json!({"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:env":{"k:{\"name\":\"MODE\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}})
        );
        assert_eq!(
            fields(&both, "manager-b"),
            json!({"f:metadata":{"f:annotations":{"f:owner-b":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:env":{"k:{\"name\":\"EXTRA\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}},"k:{\"name\":\"sidecar\"}":{".":{},"f:image":{},"f:name":{}}}}}}})
        );
        let containers = |d: &Deployment| -> Vec<(String, Vec<String>)> {
            d.spec.template.spec.as_ref().unwrap().containers.iter().map(|c| {
                let env = c.env.clone().unwrap_or_default().into_iter().map(|e| e.name).collect();
                (c.name.clone(), env)
            }).collect()
        };
        assert_eq!(
            containers(&both),
            [("nginx".to_owned(), vec!["MODE".to_owned(), "EXTRA".to_owned()]), ("sidecar".to_owned(), vec![])]
        );

        // b stops applying EXTRA: only that item goes; a's MODE stays.
        let without = apply("manager-b", dep_b(false), false).await.unwrap();
        assert_eq!(
            containers(&without),
            [("nginx".to_owned(), vec!["MODE".to_owned()]), ("sidecar".to_owned(), vec![])]
        );

        // c changes a's image: a conflict naming the item by its key.
        let c = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}});
        let err = status(apply("manager-c", c, false).await.unwrap_err());
        assert_eq!(
            err.message,
            "Apply failed with 1 conflict: conflict with \"manager-a\": .spec.template.spec.containers[name=\"nginx\"].image"
        );
    })
    .await;
}

#[tokio::test]
async fn sets_updates_and_the_scale_subresource() {
    case("ssa-update", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        // A create by update owns what it set; the maps it created carry ".".
        let mut c = ConfigMap::default();
        c.metadata.name = Some("made".into());
        c.metadata.labels = Some([(RUN_LABEL.to_owned(), run_id().to_owned())].into());
        c.data = Some([("k".to_owned(), "v".to_owned())].into());
        let made = cms
            .create(&PostParams { field_manager: Some("creator".into()), ..Default::default() }, &c)
            .await
            .unwrap();
        let (op, sub, timed, f) = entry(&made, "creator").unwrap();
        assert_eq!((op.as_str(), sub.as_str(), timed), ("Update", "", true));
        assert_eq!(
            f,
            json!({"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, format!("f:{RUN_LABEL}"): {}}}})
        );
        // Two appliers, one finalizer each: both stay, each owns its own.
        for (who, f) in [("fin-a", "example.com/a"), ("fin-b", "example.com/b")] {
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made", "finalizers": [f]}});
            cms.patch("made", &PatchParams::apply(who), &Patch::Apply(body)).await.unwrap();
        }
        let both = cms.get("made").await.unwrap();
        assert_eq!(both.metadata.finalizers.clone().unwrap(), ["example.com/a", "example.com/b"]);
        assert_eq!(fields(&both, "fin-a"), json!({"f:metadata": {"f:finalizers": {"v:\"example.com/a\"": {}}}}));
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made", "finalizers": []}});
        let one = cms.patch("made", &PatchParams::apply("fin-a"), &Patch::Apply(body)).await.unwrap();
        assert_eq!(one.metadata.finalizers.clone().unwrap(), ["example.com/b"]);
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made", "finalizers": []}});
        cms.patch("made", &PatchParams::apply("fin-b"), &Patch::Apply(body)).await.unwrap();

        // The scale subresource: a time-less Update entry for "scale" takes the replicas.
        let deployments: Api<Deployment> = env.api();
        deployments.patch("web", &PatchParams::apply("manager-a"), &Patch::Apply(dep_a())).await.unwrap();
        let pp = PatchParams {
            field_manager: Some("scaler".into()),
            ..Default::default()
        };
        deployments.patch_scale("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 3}}))).await.unwrap();
        let scaled = deployments.get("web").await.unwrap();
        assert_eq!(
            entry(&scaled, "scaler"),
            Some(("Update".into(), "scale".into(), false, json!({"f:spec": {"f:replicas": {}}})))
        );
        let a = fields(&scaled, "manager-a");
        // manager-a keeps the rest of its spec; only replicas moved to the scaler.
        assert!(a["f:spec"].as_object().is_some_and(|s| !s.is_empty()), "{a}");
        assert!(a["f:spec"].get("f:replicas").is_none(), "{a}");
    })
    .await;
}
