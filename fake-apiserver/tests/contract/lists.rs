//! Lists: label and field selectors, pagination.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};

use crate::env::{api_error, case, configmap, names};

#[tokio::test]
async fn label_and_field_selectors_and_pagination() {
    case("select", |env| async move {
        let cms: Api<ConfigMap> = env.api();
        for (name, app, tier) in [
            ("a", "web", "front"),
            ("b", "web", "back"),
            ("c", "db", "back"),
            ("d", "cache", ""),
        ] {
            let labels: Vec<(&str, &str)> = [("app", app), ("tier", tier)]
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .collect();
            cms.create(&PostParams::default(), &configmap(name, &labels))
                .await
                .unwrap();
        }
        let list = |s: &'static str| {
            let cms = cms.clone();
            let params = env.select(s);
            async move { names(&cms.list(&params).await.unwrap()) }
        };
        assert_eq!(list("app=web").await, ["a", "b"]);
        assert_eq!(list("app!=web").await, ["c", "d"]);
        assert_eq!(list("app in (db,cache)").await, ["c", "d"]);
        assert_eq!(list("tier notin (back)").await, ["a", "d"]);
        assert_eq!(list("!tier").await, ["d"]);
        assert_eq!(list("tier,app=web").await, ["a", "b"]);
        assert_eq!(
            names(
                &cms.list(&env.ours().fields("metadata.name=c"))
                    .await
                    .unwrap()
            ),
            ["c"]
        );
        let (code, _) = api_error(cms.list(&env.ours().fields("data.k=v")).await.unwrap_err());
        assert_eq!(code, 400);

        let first = cms.list(&env.ours().limit(3)).await.unwrap();
        assert_eq!(names(&first), ["a", "b", "c"]);
        let token = first.metadata.continue_.clone().expect("a continue token");
        let rest = cms
            .list(&env.ours().limit(3).continue_token(&token))
            .await
            .unwrap();
        assert_eq!(names(&rest), ["d"]);
        assert!(rest.metadata.continue_.as_deref().unwrap_or("").is_empty());

        // `remainingItemCount` counts what the storage holds past the page, so the real
        // server gives it only for lists without selectors.
        assert_eq!(first.metadata.remaining_item_count, None);
        let mut counted = None;
        for _ in 0..20 {
            // Controllers may still be adding objects to the new namespace: retry until
            // two reads agree.
            let all = cms.list(&ListParams::default()).await.unwrap().items.len();
            let page = cms.list(&ListParams::default().limit(2)).await.unwrap();
            let token = page.metadata.continue_.clone().unwrap_or_default();
            let next = cms
                .list(&ListParams::default().limit(1).continue_token(&token))
                .await
                .unwrap();
            if cms.list(&ListParams::default()).await.unwrap().items.len() == all {
                let remaining = [page, next].map(|p| p.metadata.remaining_item_count);
                counted = Some((remaining, all));
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        let (remaining, all) = counted.expect("the namespace's content settles");
        assert!(all >= 4);
        // From the start and after a continue position alike.
        assert_eq!(remaining, [Some(all as i64 - 2), Some(all as i64 - 3)]);
    })
    .await;
}
