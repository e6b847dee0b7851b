use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the `summary` subresource returns.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub text: String,
}

/// What the `token` subresource takes and returns.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TokenRequest {
    pub audience: String,
}

/// +genclient
/// +genclient:method=GetSummary,verb=get,subresource=summary,result=Summary
/// +genclient:method=GetStatusInfo,verb=get,subresource=status,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
/// +genclient:method=UpdateSummary,verb=update,subresource=summary,input=Summary,result=Summary
/// +genclient:method=CreateToken,verb=create,subresource=token,input=TokenRequest,result=TokenRequest
/// +genclient:method=CreateCopy,verb=create
/// +genclient:method=PatchSummary,verb=patch,subresource=summary,result=Summary
/// +genclient:method=ApplySummary,verb=apply,subresource=summary,input=Summary,result=Summary
/// +genclient:method=ListExtended,verb=list
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "ext.example.com", version = "v1", kind = "Gadget", namespaced, status = "Summary")]
pub struct GadgetSpec {
    pub size: u32,
}
