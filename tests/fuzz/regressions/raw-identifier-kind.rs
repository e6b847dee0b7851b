// Panicked in model.rs: "r#typeClient" is not a valid Ident.
/// +genclient
#[kube(group = "widgets.example.com", version = "v1", kind = "r#type", plural = "xs")]
pub struct Spec {}
