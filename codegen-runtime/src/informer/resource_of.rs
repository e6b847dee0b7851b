//! `kube::Resource` for the runtime's wrappers of a kind (`WithoutManagedFields<K>`,
//! `Encoded<K>`): they list, watch and are cached as `K`'s kind.

/// Implements `Resource` for `$wrapper<K>` as `K`'s kind: every type-level answer (kind,
/// group, version, plural, URL, metadata API) is `K`'s, the scope is `$scope`, and the
/// metadata is what `$meta` and `$meta_mut` give of `$this`.
macro_rules! resource_of_kind {
    ($wrapper:ident, $scope:ty, |$this:ident| $meta:expr, $meta_mut:expr) => {
        impl<K: ::kube::Resource> ::kube::Resource for $wrapper<K> {
            type DynamicType = K::DynamicType;
            type Scope = $scope;

            fn kind(dt: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                K::kind(dt)
            }
            fn group(dt: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                K::group(dt)
            }
            fn version(dt: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                K::version(dt)
            }
            fn api_version(dt: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                K::api_version(dt)
            }
            fn plural(dt: &Self::DynamicType) -> ::std::borrow::Cow<'_, str> {
                K::plural(dt)
            }
            fn metadata_api() -> bool {
                K::metadata_api()
            }
            fn url_path(dt: &Self::DynamicType, namespace: Option<&str>) -> String {
                K::url_path(dt, namespace)
            }
            fn meta(&self) -> &::kube::api::ObjectMeta {
                let $this = self;
                $meta
            }
            fn meta_mut(&mut self) -> &mut ::kube::api::ObjectMeta {
                let $this = self;
                $meta_mut
            }
        }
    };
}

pub(crate) use resource_of_kind;
