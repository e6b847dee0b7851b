#[kube(group = "widgets.example.com", version = "v1", kind = "Widget", namespaced)]
pub struct WidgetSpec {
    pub size: i32,
    // +kubebuilder:validation:Minimum=1
}
// +genclient
