//! Built-in kinds of `events.k8s.io/v1` the sample uses.

/// Events the controllers record (through `kube_codegen_runtime::events::Recorder`: kube's
/// `Recorder` with a bounded cache).
///
/// +genclient
/// +genclient:onlyVerbs=create,get,list,watch,patch
pub type Event = k8s_openapi::api::events::v1::Event;
