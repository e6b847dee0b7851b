use kube_codegen_runtime::ApplyConfiguration;
use serde::{Deserialize, Serialize};

#[derive(ApplyConfiguration, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wrapper<T> {
    pub value: T,
}

fn main() {}
