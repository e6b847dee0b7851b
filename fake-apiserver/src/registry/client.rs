//! The client the controllers write through ([`Api`]): the verbs every client's request
//! runs, so what the controllers create and update is checked, defaulted and owned like
//! any other write, and what they remove sets the other controllers off.

use serde_json::Value;

use super::{create, delete, update};
use crate::admission::Ctx;
use crate::controllers::api::Api;
use crate::error::ApiError;
use crate::resource::{ObjectRef, ResourceType};
use crate::store::State;
use crate::store::objects::ObjectKey;

impl Api for State {
    fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        create::create(self, rt, namespace, obj, &mut Ctx::named(manager))
    }

    fn update(
        &mut self,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        let at = ObjectRef {
            rt,
            namespace: Some(namespace),
            name,
            subresource: None,
        };
        update::update(self, at, obj, &mut Ctx::named(manager), None)
    }

    fn remove(&mut self, key: &ObjectKey, old: Value) -> Value {
        delete::remove(self, key, old)
    }
}
