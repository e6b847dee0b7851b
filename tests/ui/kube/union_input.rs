use kube_codegen_runtime::GenClient;

#[derive(GenClient)]
#[kube(group = "example.com", version = "v1", kind = "Foo")]
union FooSpec {
    a: u32,
    b: f32,
}

fn main() {}
