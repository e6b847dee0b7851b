// Generated code must not depend on what the user's module calls `Result`, `Option`, `Ok`...
//
// kube's own `CustomResource` expansion is not hygienic (it breaks when `Option` or `None` is
// shadowed), so the resource type lives in a clean module and `GenClient` expands here, in
// a module that shadows every prelude name the generated code could have relied on.
#![allow(dead_code, non_camel_case_types)]

mod types {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "example.com",
        version = "v1",
        kind = "Foo",
        namespaced,
        status = "FooStatus",
        scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")
    )]
    pub struct FooSpec {
        pub replicas: i32,
    }

    #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
    pub struct FooStatus {
        pub replicas: i32,
    }
}

use kube_codegen_runtime::GenClient;
// The status type is named by the expansion (as kube's own derive names it).
use types::{Foo, FooStatus};

struct Result;
struct Option;
struct Ok;
struct Err;
struct Some;
struct None;
struct Vec;
struct String;
struct Box;
struct Clone;
struct Debug;

/// +genclient:method=GetThing,verb=get,subresource=thing,result=k8s.io/api/autoscaling/v1.Scale
/// +genclient:method=ListThings,verb=list
#[derive(GenClient)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Foo",
    namespaced,
    status = "FooStatus",
    scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")
)]
struct FooClientSpec;

fn main() {}
