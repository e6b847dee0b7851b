//! Object semantics: what create, update, patch and delete do to stored objects.

use serde_json::{Value, json};

use crate::admission::Ctx;
use crate::admission::decode::options::DeleteOptions;
use crate::admission::decode::type_meta::custom_kind_errors;
use crate::admission::decode::{check_applied, check_kind, check_patched, round_trip};
use crate::admission::defaulting::default_builtin;
use crate::admission::lifecycle;
use crate::admission::validation::{admit_rules, admit_schema, error_group, review_crd};
use crate::controllers::{self, api::Api};
use crate::conversion;
use crate::error::ApiError;
use crate::meta::{
    finalizers, name_of, now, random_suffix, rv_of, set_finalizers, set_meta, user_meta, without,
};
use crate::resource::{Generation, ResourceType};
use crate::rules::field::FieldError;
use crate::rules::kinds;
use crate::rules::meta;
use crate::store::State;
use crate::store::objects::ObjectKey;
use crate::store::patch;
use crate::store::ssa;

/// The controllers create, update and remove objects with the verbs every client uses.
impl Api for State {
    fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        State::create(self, rt, namespace, obj, &mut Ctx::named(manager))
    }

    fn update(
        &mut self,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
        obj: Value,
        manager: &str,
    ) -> Result<Value, ApiError> {
        let mut ctx = Ctx::named(manager);
        State::update(self, rt, Some(namespace), name, obj, None, &mut ctx, None)
    }

    fn remove(&mut self, key: &ObjectKey, old: Value) -> Value {
        self.remove_now(key, old)
    }
}

impl State {
    /// POST: a new object.
    pub fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        obj: Value,
        ctx: &mut Ctx,
    ) -> Result<Value, ApiError> {
        self.create_with(rt, namespace, obj, ctx, None)
    }

    /// POST, with `managedFields` decided by the caller (creation by server-side apply).
    /// The order of the checks is the real server's: the body, the namespace's lifecycle,
    /// validation, then whether the name is taken.
    pub(crate) fn create_with(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        mut obj: Value,
        ctx: &mut Ctx,
        managed: Option<Value>,
    ) -> Result<Value, ApiError> {
        if !obj.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        check_kind(rt, &obj)?;
        let body_ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        let namespace = if rt.namespaced {
            let ns = namespace
                .map(str::to_owned)
                .or(body_ns.clone())
                .unwrap_or_else(|| "default".to_owned());
            if body_ns.as_ref().is_some_and(|b| *b != ns) {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            Some(ns)
        } else {
            None
        };
        let generate = obj
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if name_of(&obj).is_none_or(str::is_empty) && !generate.is_empty() {
            let prefix: String = generate.chars().take(58).collect();
            // Like the real server: up to 8 tries for a name not taken yet.
            let seed = self.store.resource_version();
            let candidates: Vec<String> = (0..8)
                .map(|i| format!("{prefix}{}", random_suffix(seed.wrapping_add(i * 7919))))
                .collect();
            let free = candidates
                .iter()
                .find(|n| !self.store.contains(&Self::key(rt, namespace.as_deref(), n)));
            let Some(name) = free else {
                return Err(ApiError::generate_name_conflict(
                    &rt.group,
                    &rt.plural,
                    &candidates[7],
                ));
            };
            set_meta(&mut obj, "name", json!(name));
        }
        let name = name_of(&obj).unwrap_or("").to_owned();
        if let Some(ns) = &namespace {
            lifecycle::admit_create(
                self,
                rt,
                ns,
                if name.is_empty() { &generate } else { &name },
            )?;
        }
        if rt.custom {
            let errors = custom_kind_errors(&rt.kind, &obj);
            if !errors.is_empty() {
                let kind = obj["kind"].as_str().unwrap_or_default();
                return Err(ApiError::invalid(&rt.group, kind, &name, errors));
            }
        }
        let mut errors = meta::validate_create(&obj, rt.meta);
        if !rt.custom {
            let mut placed = obj.clone();
            if let Some(ns) = &namespace {
                set_meta(&mut placed, "namespace", json!(ns));
            }
            errors.extend(kinds::validate(&rt.api_version(), &rt.kind, &placed, None));
        }
        if rt.is("apiextensions.k8s.io", "customresourcedefinitions") {
            errors.extend(review_crd(None, &mut obj, &mut ctx.warnings));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(error_group(rt), &rt.kind, &name, errors));
        }
        if let Some(ns) = &namespace {
            set_meta(&mut obj, "namespace", json!(ns));
        } else if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("namespace");
        }
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("deletionTimestamp");
            meta.remove("deletionGracePeriodSeconds");
        }
        if rt.status
            && let Some(map) = obj.as_object_mut()
        {
            map.remove("status");
        }
        self.prepare_builtin_create(rt, &mut obj);
        let mut errors = admit_schema(rt, &mut obj, None, ctx)?;
        admit_rules(rt, &obj, None, &mut errors, ctx);
        if !errors.is_empty() {
            return Err(ApiError::invalid(error_group(rt), &rt.kind, &name, errors)
                .with_warnings(std::mem::take(&mut ctx.warnings)));
        }
        if rt.is("apiextensions.k8s.io", "customresourcedefinitions") {
            self.accept_crd(None, &mut obj);
        }
        let key = Self::key(rt, namespace.as_deref(), &name);
        if let Some(existing) = self.store.get(&key) {
            let deleting = existing.pointer("/metadata/deletionTimestamp").is_some();
            return Err(ApiError::already_exists(
                &rt.group, &rt.plural, &name, deleting,
            ));
        }
        rt.rewrite(&mut obj);
        set_meta(&mut obj, "uid", json!(self.store.next_uid()));
        set_meta(&mut obj, "creationTimestamp", json!(now()));
        if rt.generation != Generation::Untracked {
            set_meta(&mut obj, "generation", json!(1));
        }
        match managed {
            Some(Value::Null) => {
                if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
            }
            Some(m) => set_meta(&mut obj, "managedFields", m),
            None => {
                let ty = ssa_type(rt);
                let zero = ssa::schema::zero(ty, &rt.api_version(), &rt.kind);
                let reset = ssa::reset_fields("", rt.status, None, &obj);
                let time = now();
                let w = ssa::Writer {
                    manager: &ctx.manager,
                    subresource: "",
                    api_version: &rt.api_version(),
                    now: &time,
                };
                ssa::update(None, &zero, &mut obj, ty, &w, &reset);
            }
        }
        round_trip(rt, &mut obj);
        if ctx.dry_run {
            return Ok(obj);
        }
        let rv = self.store.next_rv();
        set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
        let mut stored = obj.clone();
        conversion::to_storage(self, rt, &mut stored, &ctx.conversions)?;
        self.store.put(key, stored);
        if rt.plural == "customresourcedefinitions" && rt.group == "apiextensions.k8s.io" {
            self.serve_crd(&obj);
        }
        if rt.is("", "namespaces") {
            controllers::namespaces::ensure_defaults(self, &name);
        }
        Ok(obj)
    }

    pub(crate) fn prepare_builtin_create(&self, rt: &ResourceType, obj: &mut Value) {
        match (rt.group.as_str(), rt.plural.as_str()) {
            ("", "namespaces") => self.prepare_namespace(rt, obj),
            ("", "pods") => obj["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"}),
            _ => {}
        }
        default_builtin(rt, obj);
    }

    /// PUT, or the final step of PATCH: replaces the object, with every server-side rule.
    #[allow(clippy::too_many_arguments)] // the HTTP verb's parameters, passed through as they are
    pub fn update(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        mut new: Value,
        subresource: Option<&str>,
        ctx: &mut Ctx,
        apply_manager: Option<&Value>,
    ) -> Result<Value, ApiError> {
        let key = Self::key(rt, namespace, name);
        let old = self
            .store
            .get(&key)
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        if !new.is_object() {
            return Err(ApiError::bad_request("the body must be a JSON object"));
        }
        check_kind(rt, &new)?;
        if let (Some(url_ns), Some(body_ns)) = (
            namespace.filter(|_| rt.namespaced),
            new.pointer("/metadata/namespace").and_then(Value::as_str),
        ) && !body_ns.is_empty()
            && body_ns != url_ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if let Some(body_name) = name_of(&new)
            && body_name != name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let wanted_rv = new
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !wanted_rv.is_empty() && wanted_rv != rv_of(&old).to_string() {
            return Err(ApiError::conflict(
                &rt.group,
                &rt.plural,
                name,
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }
        match subresource {
            Some("status") => {
                // Only the status changes.
                let status = new.get("status").cloned();
                new = without(&old, &["status"]);
                if let Some(status) = status {
                    new["status"] = status;
                }
            }
            _ if rt.status => {
                // The main endpoint ignores status when the status subresource is on.
                match old.get("status") {
                    Some(status) => new["status"] = status.clone(),
                    None => {
                        if let Some(map) = new.as_object_mut() {
                            map.remove("status");
                        }
                    }
                }
            }
            _ => {}
        }
        self.keep_namespace_fields(rt, &old, &mut new, subresource);
        let immutable = meta::validate_immutable(&new, &old);
        // Server-owned metadata keeps its values.
        for k in [
            "uid",
            "creationTimestamp",
            "namespace",
            "name",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            match old.pointer(&format!("/metadata/{k}")) {
                Some(v) => set_meta(&mut new, k, v.clone()),
                None => {
                    if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                        meta.remove(k);
                    }
                }
            }
        }
        if subresource.is_none() && old.pointer("/metadata/deletionTimestamp").is_some() {
            let before = finalizers(&old);
            if let Some(added) = finalizers(&new).iter().find(|f| !before.contains(f)) {
                return Err(ApiError::invalid(
                    &rt.group,
                    &rt.kind,
                    name,
                    vec![FieldError::forbidden(
                        "metadata.finalizers",
                        format!(
                            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{\"{added}\"}}"
                        ),
                    )],
                ));
            }
        }
        if subresource.is_none() {
            default_builtin(rt, &mut new);
        }
        // The stored object as this version serves it, which every check below compares with.
        let served_old = conversion::serve(rt, &old, &ctx.conversions)?;
        let mut errors = meta::validate_update(&new, rt.meta);
        errors.extend(immutable);
        if !rt.custom && subresource.is_none() {
            errors.extend(kinds::validate(
                &rt.api_version(),
                &rt.kind,
                &new,
                Some(&served_old),
            ));
        }
        if rt.is("apiextensions.k8s.io", "customresourcedefinitions") && subresource.is_none() {
            errors.extend(review_crd(Some(&served_old), &mut new, &mut ctx.warnings));
        }
        let kind_errors = if rt.custom {
            custom_kind_errors(&rt.kind, &new)
        } else {
            Vec::new()
        };
        // A custom resource of another kind is not checked against the schema.
        if kind_errors.is_empty() {
            errors.extend(admit_schema(rt, &mut new, Some(&served_old), ctx)?);
            admit_rules(rt, &new, Some(&served_old), &mut errors, ctx);
        } else {
            errors.extend(kind_errors);
            let kind = new["kind"].as_str().unwrap_or_default().to_owned();
            return Err(ApiError::invalid(&rt.group, &kind, name, errors));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(error_group(rt), &rt.kind, name, errors)
                .with_warnings(std::mem::take(&mut ctx.warnings)));
        }
        if rt.is("apiextensions.k8s.io", "customresourcedefinitions") && subresource.is_none() {
            self.accept_crd(Some(&served_old), &mut new);
        }
        rt.rewrite(&mut new);
        if let Some(generation) = next_generation(rt, &served_old, &new) {
            set_meta(&mut new, "generation", json!(generation));
        }
        match apply_manager {
            Some(Value::Null) => {
                if let Some(meta) = new.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
            }
            Some(managed) => set_meta(&mut new, "managedFields", managed.clone()),
            None => {
                let ty = ssa_type(rt);
                let zero = ssa::schema::zero(ty, &rt.api_version(), &rt.kind);
                let sub = subresource.unwrap_or("");
                let reset = ssa::reset_fields(sub, rt.status, Some(&served_old), &new);
                let time = now();
                let w = ssa::Writer {
                    manager: &ctx.manager,
                    subresource: sub,
                    api_version: &rt.api_version(),
                    now: &time,
                };
                ssa::update(Some(&served_old), &zero, &mut new, ty, &w, &reset);
            }
        }
        round_trip(rt, &mut new);
        // A write that changes nothing is not a write: no new version, no event.
        let unchanged = without(&new, &["metadata", "apiVersion", "kind"])
            == without(&served_old, &["metadata", "apiVersion", "kind"])
            && user_meta(&new) == user_meta(&old)
            && new.pointer("/metadata/managedFields") == old.pointer("/metadata/managedFields");
        if unchanged || ctx.dry_run {
            set_meta(&mut new, "resourceVersion", json!(rv_of(&old).to_string()));
            return Ok(if unchanged { served_old } else { new });
        }
        // Removing the last finalizer of an object being deleted deletes it.
        let held_by_spec = rt.is("", "namespaces")
            && new
                .pointer("/spec/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty());
        if new.pointer("/metadata/deletionTimestamp").is_some()
            && finalizers(&new).is_empty()
            && !held_by_spec
        {
            let rv = self.store.next_rv();
            set_meta(&mut new, "resourceVersion", json!(rv.to_string()));
            let mut stored = new.clone();
            conversion::to_storage(self, rt, &mut stored, &ctx.conversions)?;
            self.store.remove(&key, &stored);
            controllers::after_delete(self, &new);
            return Ok(new);
        }
        let rv = self.store.next_rv();
        set_meta(&mut new, "resourceVersion", json!(rv.to_string()));
        let mut stored = new.clone();
        conversion::to_storage(self, rt, &mut stored, &ctx.conversions)?;
        self.store.put(key, stored);
        if rt.group == "apiextensions.k8s.io" && rt.plural == "customresourcedefinitions" {
            self.serve_crd(&new);
        }
        controllers::gc::collect(self);
        controllers::namespaces::reconcile_root_ca(self, rt, &new);
        Ok(new)
    }

    /// PATCH: merge, JSON, strategic or apply, then the update rules.
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        content_type: &str,
        body: &[u8],
        subresource: Option<&str>,
        ctx: &mut Ctx,
        force: bool,
    ) -> Result<Value, ApiError> {
        let kind = content_type.split(';').next().unwrap_or("").trim();
        let parsed: Value = if kind == "application/apply-patch+yaml" {
            serde_saphyr::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?
        };
        let key = Self::key(rt, namespace, name);
        let existing = self
            .store
            .get(&key)
            .map(|o| conversion::serve(rt, &o, &ctx.conversions))
            .transpose()?;
        if kind == "application/apply-patch+yaml" {
            check_applied(rt, name, &parsed)?;
            let applied = self.server_side_apply(
                rt,
                name,
                existing.as_ref(),
                &parsed,
                subresource,
                ctx,
                force,
            )?;
            return match existing {
                None => {
                    let mut applied = applied;
                    set_meta(&mut applied, "name", json!(name));
                    let managed = applied
                        .pointer("/metadata/managedFields")
                        .cloned()
                        .unwrap_or(Value::Null);
                    self.create_with(rt, namespace, applied, ctx, Some(managed))
                }
                Some(_) => {
                    let mut applied = applied;
                    let managed = applied
                        .pointer("/metadata/managedFields")
                        .cloned()
                        .unwrap_or(Value::Null);
                    if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
                        meta.remove("resourceVersion");
                    }
                    if let Some(rv) = parsed.pointer("/metadata/resourceVersion") {
                        set_meta(&mut applied, "resourceVersion", rv.clone());
                    }
                    self.update(
                        rt,
                        namespace,
                        name,
                        applied,
                        subresource,
                        ctx,
                        Some(&managed),
                    )
                }
            };
        }
        let mut target =
            existing.ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        let had_rv = parsed.pointer("/metadata/resourceVersion").is_some();
        match kind {
            "application/merge-patch+json" => patch::merge_patch(&mut target, &parsed),
            "application/strategic-merge-patch+json" => {
                patch::strategic_merge_patch(&mut target, &parsed, ssa_type(rt))
                    .map_err(|e| ApiError::custom(500, "", &e))?;
            }
            "application/json-patch+json" => {
                patch::json_patch(&mut target, &parsed).map_err(|_| ApiError::patch_rejected())?;
            }
            _ => return Err(ApiError::unsupported_patch_type()),
        }
        if name_of(&target).is_none_or(str::is_empty) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name} based on URL) was undeterminable: name must be provided"
            )));
        }
        check_patched(rt, kind, &target, &parsed, subresource)?;
        if !had_rv && let Some(meta) = target.get_mut("metadata").and_then(Value::as_object_mut) {
            // A patch without a resourceVersion applies to whatever is stored.
            meta.remove("resourceVersion");
        }
        self.update(rt, namespace, name, target, subresource, ctx, None)
    }

    /// The ownership side of a server-side apply: the merged object and its
    /// `managedFields`, or the 409 of its conflicts.
    #[allow(clippy::too_many_arguments)]
    fn server_side_apply(
        &self,
        rt: &ResourceType,
        name: &str,
        existing: Option<&Value>,
        config: &Value,
        subresource: Option<&str>,
        ctx: &Ctx,
        force: bool,
    ) -> Result<Value, ApiError> {
        let sent_av = config
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let sent_kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
        if sent_av != rt.api_version() || sent_kind != rt.kind {
            let (g, v) = sent_av.rsplit_once('/').unwrap_or(("", sent_av));
            return Err(ApiError::bad_request(format!(
                "invalid object type: {g}/{v}, Kind={sent_kind}"
            )));
        }
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        let _ = name;
        let ty = ssa_type(rt);
        let zero = ssa::schema::zero(ty, &rt.api_version(), &rt.kind);
        let sub = subresource.unwrap_or("");
        let reset = ssa::reset_fields(sub, rt.status, existing, config);
        let time = now();
        let w = ssa::Writer {
            manager: &ctx.manager,
            subresource: sub,
            api_version: &rt.api_version(),
            now: &time,
        };
        ssa::apply(existing, &zero, config, ty, &w, force, &reset).map_err(|c| {
            let (message, causes) = c.message_and_causes();
            ApiError::apply_conflict(message, causes)
        })
    }

    /// DELETE: finalizers, preconditions, propagation.
    pub fn delete(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
        ctx: &Ctx,
    ) -> Result<Value, ApiError> {
        let key = Self::key(rt, namespace, name);
        let old = self
            .store
            .get(&key)
            .ok_or_else(|| ApiError::not_found(&rt.group, &rt.plural, name))?;
        let failed = |why: String| {
            let qualified = if rt.group.is_empty() {
                rt.kind.clone()
            } else {
                format!("{}.{}", rt.kind, rt.group)
            };
            let mut e = ApiError::conflict(&rt.group, &rt.kind, name, &why);
            e.message = format!("Operation cannot be fulfilled on {qualified} \"{name}\": {why}");
            e
        };
        let uid = old
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(want) = &options.uid
            && want != uid
        {
            return Err(failed(format!(
                "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
            )));
        }
        if let Some(want) = &options.resource_version
            && *want != rv_of(&old).to_string()
        {
            return Err(failed(format!(
                "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({}). The object might have been modified",
                rv_of(&old)
            )));
        }
        if rt.group.is_empty()
            && rt.plural == "namespaces"
            && matches!(name, "default" | "kube-system" | "kube-public")
        {
            return Err(ApiError::forbidden(
                "",
                "namespaces",
                name,
                "this namespace may not be deleted",
                Vec::new(),
            ));
        }
        // Served in the version asked for (converted before anything changes).
        let served_old = conversion::serve(rt, &old, &ctx.conversions)?;
        if ctx.dry_run {
            return Ok(served_old);
        }
        let served = |obj: &Value| {
            conversion::serve(rt, obj, &ctx.conversions).unwrap_or_else(|_| rt.served(obj))
        };
        // Jobs and CronJobs orphan their dependents unless told otherwise.
        let default_policy = if rt.group == "batch" {
            "Orphan"
        } else {
            "Background"
        };
        let policy = options.policy().unwrap_or(default_policy);
        let mut fins = finalizers(&old);
        match policy {
            "Foreground" if !fins.iter().any(|f| f == "foregroundDeletion") => {
                fins.push("foregroundDeletion".into())
            }
            "Orphan" if !fins.iter().any(|f| f == "orphan") => fins.push("orphan".into()),
            _ => {}
        }
        if rt.is("", "namespaces") {
            return Ok(self.delete_namespace(rt, old, options));
        }
        if fins.is_empty() {
            let obj = self.remove_now(&key, old);
            return Ok(served(&obj));
        }
        // Finalizers keep the object; it is marked and removed when they are gone.
        let mut marked = old.clone();
        if marked.pointer("/metadata/deletionTimestamp").is_none() {
            set_meta(&mut marked, "deletionTimestamp", json!(now()));
            set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
        }
        set_finalizers(&mut marked, &fins);
        if marked != old {
            let rv = self.store.next_rv();
            set_meta(&mut marked, "resourceVersion", json!(rv.to_string()));
            self.store.put(key, marked.clone());
        }
        controllers::gc::collect(self);
        let current = self.store.get(&Self::key(rt, namespace, name));
        Ok(served(current.as_ref().unwrap_or(&marked)))
    }

    /// Removes an object at a new version, and collects its dependents.
    pub(crate) fn remove_now(&mut self, key: &ObjectKey, old: Value) -> Value {
        let rv = self.store.next_rv();
        let mut tombstone = old;
        set_meta(&mut tombstone, "resourceVersion", json!(rv.to_string()));
        self.store.remove(key, &tombstone);
        controllers::after_delete(self, &tombstone);
        tombstone
    }
}

/// The generation an update gives an object, when its kind counts them.
fn next_generation(rt: &ResourceType, old: &Value, new: &Value) -> Option<i64> {
    let generation = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)?;
    let at = |obj: &'_ Value, path: &str| obj.pointer(path).cloned();
    let changed = match rt.generation {
        Generation::Untracked => false,
        Generation::Spec => at(old, "/spec") != at(new, "/spec"),
        Generation::SpecOrAnnotations => {
            at(old, "/spec") != at(new, "/spec")
                || at(old, "/metadata/annotations") != at(new, "/metadata/annotations")
        }
        Generation::AllButMetadata => {
            let ignored: &[&str] = if rt.status {
                &["metadata", "status", "apiVersion", "kind"]
            } else {
                &["metadata", "apiVersion", "kind"]
            };
            without(new, ignored) != without(old, ignored)
        }
    };
    Some(if changed { generation + 1 } else { generation })
}

/// A resource's type as server-side apply sees it.
fn ssa_type(rt: &ResourceType) -> ssa::schema::Ty<'_> {
    ssa::schema::Ty::of(&rt.api_version(), &rt.kind, rt.schema.as_ref(), rt.custom)
}
