//! `networking.k8s.io/v1`: NetworkPolicies (ports, peers, CIDRs, policy types), Ingresses
//! (rules, paths and their types, backends, TLS hosts, class) and IngressClasses
//! (controller, parameters), validated after their defaults as kube-apiserver 1.36 does.

use serde_json::{Value, json};

use super::selector::{cidr, ip, label_selector, port_name, port_number, strict_subset};
use crate::field::FieldError;
use crate::names::{dns1123_label, dns1123_subdomain, path_segment};

fn list<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `ValidateNetworkPolicySpec`.
pub(crate) fn network_policy(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    label_selector(
        spec.get("podSelector").unwrap_or(&empty),
        "spec.podSelector",
        errors,
    );
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in list(spec, direction).iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in list(rule, "ports").iter().enumerate() {
                policy_port(port, &format!("{at}.ports[{j}]"), errors);
            }
            for (j, peer) in list(rule, peers).iter().enumerate() {
                policy_peer(peer, &format!("{at}.{peers}[{j}]"), errors);
            }
        }
    }
    let types = list(spec, "policyTypes");
    if types.len() > 2 {
        errors.push(FieldError::invalid(
            "spec.policyTypes",
            &json!(types),
            "may not specify more than two policyTypes",
        ));
        return;
    }
    for (i, t) in types.iter().enumerate() {
        if !matches!(t.as_str(), Some("Ingress" | "Egress")) {
            errors.push(FieldError::not_supported(
                format!("spec.policyTypes[{i}]"),
                t,
                &["Ingress", "Egress"],
            ));
        }
    }
}

fn policy_port(port: &Value, at: &str, errors: &mut Vec<FieldError>) {
    if let Some(protocol) = port.get("protocol").filter(|p| !p.is_null())
        && !matches!(protocol.as_str(), Some("TCP" | "UDP" | "SCTP"))
    {
        errors.push(FieldError::not_supported(
            format!("{at}.protocol"),
            protocol,
            &["TCP", "UDP", "SCTP"],
        ));
    }
    let end = port.get("endPort").and_then(Value::as_i64);
    let end_at = format!("{at}.endPort");
    match port.get("port").filter(|p| !p.is_null()) {
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            port_number(n, &format!("{at}.port"), errors);
            if let Some(end) = end {
                if end < n {
                    errors.push(FieldError::invalid(
                        &end_at,
                        &json!(n),
                        "must be greater than or equal to `port`",
                    ));
                }
                port_number(end, &end_at, errors);
            }
        }
        Some(name) => {
            if let Some(end) = end {
                errors.push(FieldError::invalid(
                    &end_at,
                    &json!(end),
                    "may not be specified when `port` is non-numeric",
                ));
            }
            let name = name.as_str().unwrap_or("");
            for msg in port_name(name) {
                errors.push(FieldError::invalid_str(format!("{at}.port"), name, msg));
            }
        }
        None => {
            if let Some(end) = end {
                errors.push(FieldError::invalid(
                    &end_at,
                    &json!(end),
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
}

fn policy_peer(peer: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let mut peers = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if let Some(sel) = peer.get(key).filter(|s| !s.is_null()) {
            peers += 1;
            label_selector(sel, &format!("{at}.{key}"), errors);
        }
    }
    let block = peer.get("ipBlock").filter(|b| !b.is_null());
    if let Some(block) = block {
        peers += 1;
        ip_block(block, &format!("{at}.ipBlock"), errors);
    }
    if peers == 0 {
        errors.push(FieldError::required(at, "must specify a peer"));
    } else if peers > 1 && block.is_some() {
        errors.push(FieldError::forbidden(
            at,
            "may not specify both ipBlock and another peer",
        ));
    }
}

const CIDR_MSG: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

fn ip_block(block: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let value = text(block, "cidr");
    if value.is_empty() {
        errors.push(FieldError::required(format!("{at}.cidr"), ""));
        return;
    }
    let Some(outer) = cidr(value) else {
        errors.push(FieldError::invalid_str(
            format!("{at}.cidr"),
            value,
            CIDR_MSG,
        ));
        return;
    };
    for (i, except) in list(block, "except").iter().enumerate() {
        let except = except.as_str().unwrap_or("");
        let path = format!("{at}.except[{i}]");
        match cidr(except) {
            None => errors.push(FieldError::invalid_str(&path, except, CIDR_MSG)),
            Some(inner) if !strict_subset(outer, inner) => errors.push(FieldError::invalid_str(
                &path,
                except,
                "must be a strict subset of `cidr`",
            )),
            Some(_) => {}
        }
    }
}

/// `ValidateIngressSpec`.
pub(crate) fn ingress(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let rules = list(spec, "rules");
    let default = spec.get("defaultBackend").filter(|b| !b.is_null());
    if rules.is_empty() && default.is_none() {
        let shown = spec.get("rules").cloned().unwrap_or(Value::Null);
        errors.push(FieldError::invalid(
            "spec",
            &shown,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default {
        ingress_backend(backend, "spec.defaultBackend", errors);
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let host = text(rule, "host");
        if !host.is_empty() {
            host_name(host, &format!("{at}.host"), true, errors);
        }
        if let Some(http) = rule.get("http").filter(|h| !h.is_null()) {
            let paths = list(http, "paths");
            if paths.is_empty() {
                errors.push(FieldError::required(format!("{at}.http.paths"), ""));
            }
            for (j, path) in paths.iter().enumerate() {
                ingress_path(path, &format!("{at}.http.paths[{j}]"), errors);
            }
        }
    }
    for (i, tls) in list(spec, "tls").iter().enumerate() {
        for (j, host) in list(tls, "hosts").iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            host_name(host, &format!("spec.tls[{i}].hosts[{j}]"), false, errors);
        }
        let secret = text(tls, "secretName");
        if !secret.is_empty() {
            for msg in dns1123_subdomain(secret) {
                errors.push(FieldError::invalid_str(
                    format!("spec.tls[{i}].secretName"),
                    secret,
                    msg,
                ));
            }
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        for msg in dns1123_subdomain(class) {
            errors.push(FieldError::invalid_str("spec.ingressClassName", class, msg));
        }
    }
}

const WILDCARD_MSG: &str = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// A rule's host (`rule`: not an IP address) or a TLS host: a subdomain, or a wildcard one.
fn host_name(host: &str, at: &str, rule: bool, errors: &mut Vec<FieldError>) {
    if rule && ip(host).is_some() {
        errors.push(FieldError::invalid_str(
            at,
            host,
            "must be a DNS name, not an IP address",
        ));
    }
    if host.contains('*') {
        let valid = host
            .strip_prefix("*.")
            .is_some_and(|rest| dns1123_subdomain(rest).is_empty());
        if host.len() > 253 {
            errors.push(FieldError::invalid_str(
                at,
                host,
                "must be no more than 253 characters",
            ));
        }
        if !valid {
            errors.push(FieldError::invalid_str(at, host, WILDCARD_MSG));
        }
    } else {
        for msg in dns1123_subdomain(host) {
            errors.push(FieldError::invalid_str(at, host, msg));
        }
    }
}

fn ingress_path(path: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let Some(ty) = path.get("pathType").filter(|t| !t.is_null()) else {
        errors.push(FieldError::required(
            format!("{at}.pathType"),
            "pathType must be specified",
        ));
        return;
    };
    let value = text(path, "path");
    let path_at = format!("{at}.path");
    match ty.as_str() {
        Some("Exact" | "Prefix") => {
            if !value.starts_with('/') {
                errors.push(FieldError::invalid_str(
                    &path_at,
                    value,
                    "must be an absolute path",
                ));
            }
            for bad in ["//", "/./", "/../", "%2f", "%2F"] {
                if value.contains(bad) {
                    let msg = format!("must not contain '{bad}'");
                    errors.push(FieldError::invalid_str(&path_at, value, msg));
                }
            }
            for bad in ["/..", "/."] {
                if value.ends_with(bad) {
                    let msg = format!("cannot end with '{bad}'");
                    errors.push(FieldError::invalid_str(&path_at, value, msg));
                }
            }
        }
        Some("ImplementationSpecific") => {
            if !value.is_empty() && !value.starts_with('/') {
                errors.push(FieldError::invalid_str(
                    &path_at,
                    value,
                    "must be an absolute path",
                ));
            }
        }
        _ => errors.push(FieldError::not_supported(
            format!("{at}.pathType"),
            ty,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    let empty = json!({});
    let backend = path.get("backend").unwrap_or(&empty);
    ingress_backend(backend, &format!("{at}.backend"), errors);
}

fn ingress_backend(backend: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let resource = backend.get("resource").filter(|r| !r.is_null());
    let service = backend.get("service").filter(|s| !s.is_null());
    match (resource, service) {
        (Some(_), Some(_)) => errors.push(FieldError::invalid_str(
            at,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(resource), None) => typed_reference(resource, &format!("{at}.resource"), errors),
        (None, Some(service)) => service_backend(service, at, errors),
        (None, None) => errors.push(FieldError::invalid_str(
            at,
            "",
            "resource or service backend is required",
        )),
    }
}

fn service_backend(service: &Value, at: &str, errors: &mut Vec<FieldError>) {
    let name = text(service, "name");
    if name.is_empty() {
        errors.push(FieldError::required(format!("{at}.service.name"), ""));
    }
    for msg in dns1123_label(name).into_iter().filter(|_| !name.is_empty()) {
        errors.push(FieldError::invalid_str(
            format!("{at}.service.name"),
            name,
            msg,
        ));
    }
    let empty = json!({});
    let port = service.get("port").unwrap_or(&empty);
    let port_name_value = text(port, "name");
    let number = port.get("number").and_then(Value::as_i64).unwrap_or(0);
    match (port_name_value.is_empty(), number) {
        (false, n) if n != 0 => errors.push(FieldError::invalid_str(
            at,
            "",
            "cannot set both port name & port number",
        )),
        (false, _) => {
            for msg in port_name(port_name_value) {
                let path = format!("{at}.service.port.name");
                errors.push(FieldError::invalid_str(path, port_name_value, msg));
            }
        }
        (true, 0) => errors.push(FieldError::required(at, "port name or number is required")),
        (true, n) => port_number(n, &format!("{at}.service.port.number"), errors),
    }
}

/// `validateIngressClassSpec`: the controller, a domain-prefixed path, and the
/// parameters' reference and scope.
pub(crate) fn ingress_class(obj: &Value, errors: &mut Vec<FieldError>) {
    let empty = json!({});
    let spec = obj.get("spec").unwrap_or(&empty);
    let controller = text(spec, "controller");
    if controller.len() > 250 {
        errors.push(FieldError::too_long("spec.controller", 250));
    }
    domain_prefixed_path(controller, "spec.controller", errors);
    if let Some(params) = spec.get("parameters").filter(|p| !p.is_null()) {
        ingress_class_parameters(params, errors);
    }
}

/// `IsDomainPrefixedPath`: `host/path`, the host a subdomain.
fn domain_prefixed_path(value: &str, at: &str, errors: &mut Vec<FieldError>) {
    if value.is_empty() {
        errors.push(FieldError::required(at, ""));
        return;
    }
    let Some((host, path)) = value.split_once('/') else {
        errors.push(FieldError::invalid_str(
            at,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        ));
        return;
    };
    for msg in dns1123_subdomain(host) {
        errors.push(FieldError::invalid_str(at, host, msg));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(allowed) {
        errors.push(FieldError::invalid_str(
            at,
            path,
            "Invalid path: must contain only valid characters",
        ));
    }
}

/// A typed local reference (an Ingress's resource backend, an IngressClass's
/// parameters): the group a subdomain, a kind and a name that are path segments.
fn typed_reference(reference: &Value, at: &str, errors: &mut Vec<FieldError>) {
    if let Some(group) = reference.get("apiGroup").and_then(Value::as_str) {
        for msg in dns1123_subdomain(group) {
            errors.push(FieldError::invalid_str(
                format!("{at}.apiGroup"),
                group,
                msg,
            ));
        }
    }
    for key in ["kind", "name"] {
        let value = text(reference, key);
        if value.is_empty() {
            errors.push(FieldError::required(format!("{at}.{key}"), ""));
        }
        for msg in path_segment(value, false) {
            errors.push(FieldError::invalid_str(format!("{at}.{key}"), value, msg));
        }
    }
}

fn ingress_class_parameters(params: &Value, errors: &mut Vec<FieldError>) {
    let at = "spec.parameters";
    typed_reference(params, at, errors);
    let Some(scope) = params.get("scope").filter(|s| !s.is_null()) else {
        errors.push(FieldError::required(format!("{at}.scope"), ""));
        return;
    };
    let namespace = params.get("namespace").filter(|n| !n.is_null());
    match (scope.as_str(), namespace) {
        (Some("Namespace"), None) => errors.push(FieldError::required(
            format!("{at}.namespace"),
            "`parameters.scope` is set to 'Namespace'",
        )),
        (Some("Namespace"), Some(ns)) => {
            let ns = ns.as_str().unwrap_or("");
            for msg in dns1123_label(ns) {
                errors.push(FieldError::invalid_str(format!("{at}.namespace"), ns, msg));
            }
        }
        (Some("Cluster"), Some(_)) => errors.push(FieldError::forbidden(
            format!("{at}.namespace"),
            "`parameters.scope` is set to 'Cluster'",
        )),
        (Some("Cluster"), None) => {}
        _ => errors.push(FieldError::not_supported(
            format!("{at}.scope"),
            scope,
            &["Cluster", "Namespace"],
        )),
    }
}
