//! `discovery.k8s.io/v1` EndpointSlices, validated after their defaults as
//! kube-apiserver 1.36 does: the address type, the ports and each endpoint's addresses,
//! node name and hostname.

use std::net::IpAddr;

use serde_json::{Value, json};

use super::selector::ip;
use crate::field::FieldError;
use crate::names::{dns1123_label, dns1123_subdomain, qualified_name};

const IP_MSG: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

/// `ValidateEndpointSlice` beyond the metadata (on an update, unchanged endpoints are not
/// checked again).
pub(crate) fn endpoint_slice(new: &Value, old: Option<&Value>, errors: &mut Vec<FieldError>) {
    let ty = new.get("addressType").and_then(Value::as_str).unwrap_or("");
    if ty.is_empty() {
        errors.push(FieldError::required("addressType", ""));
    } else if !matches!(ty, "FQDN" | "IPv4" | "IPv6") {
        errors.push(FieldError::not_supported(
            "addressType",
            &json!(ty),
            &["FQDN", "IPv4", "IPv6"],
        ));
    }
    ports(new, errors);
    let mut endpoint_errors = Vec::new();
    endpoints(new, ty, &mut endpoint_errors);
    if old.is_none_or(|old| old.get("endpoints") != new.get("endpoints")) {
        errors.append(&mut endpoint_errors);
    }
}

fn ports(obj: &Value, errors: &mut Vec<FieldError>) {
    let list = obj.get("ports").and_then(Value::as_array);
    let list = list.map_or(&[][..], Vec::as_slice);
    if list.len() > 20000 {
        errors.push(FieldError::too_many("ports", list.len(), 20000));
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in list.iter().enumerate() {
        let at = format!("ports[{i}]");
        let name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if !name.is_empty() {
            for msg in dns1123_label(name) {
                errors.push(FieldError::invalid_str(format!("{at}.name"), name, msg));
            }
        }
        if names.contains(&name) {
            errors.push(FieldError::duplicate(format!("{at}.name"), &json!(name)));
        } else {
            names.push(name);
        }
        match port.get("protocol").filter(|p| !p.is_null()) {
            None => errors.push(FieldError::required(format!("{at}.protocol"), "")),
            Some(p) if !matches!(p.as_str(), Some("SCTP" | "TCP" | "UDP")) => {
                errors.push(FieldError::not_supported(
                    format!("{at}.protocol"),
                    p,
                    &["SCTP", "TCP", "UDP"],
                ));
            }
            Some(_) => {}
        }
        if let Some(app) = port.get("appProtocol").and_then(Value::as_str) {
            for msg in qualified_name(app) {
                errors.push(FieldError::invalid_str(
                    format!("{at}.appProtocol"),
                    app,
                    msg,
                ));
            }
        }
    }
}

fn endpoints(obj: &Value, ty: &str, errors: &mut Vec<FieldError>) {
    let list = obj.get("endpoints").and_then(Value::as_array);
    let list = list.map_or(&[][..], Vec::as_slice);
    if list.len() > 1000 {
        errors.push(FieldError::too_many("endpoints", list.len(), 1000));
        return;
    }
    for (i, endpoint) in list.iter().enumerate() {
        let at = format!("endpoints[{i}]");
        let addresses_at = format!("{at}.addresses");
        let addresses = endpoint.get("addresses").and_then(Value::as_array);
        let addresses = addresses.map_or(&[][..], Vec::as_slice);
        if addresses.is_empty() {
            errors.push(FieldError::required(
                &addresses_at,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > 100 {
            errors.push(FieldError::too_many(&addresses_at, addresses.len(), 100));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or("");
            address_of(ty, address, &addresses_at, j, errors);
        }
        if let Some(node) = endpoint.get("nodeName").and_then(Value::as_str) {
            for msg in dns1123_subdomain(node) {
                errors.push(FieldError::invalid_str(format!("{at}.nodeName"), node, msg));
            }
        }
        if let Some(host) = endpoint.get("hostname").and_then(Value::as_str) {
            for msg in dns1123_label(host) {
                errors.push(FieldError::invalid_str(format!("{at}.hostname"), host, msg));
            }
        }
    }
}

/// One address of an endpoint, by the slice's address type (unknown types are not
/// checked).
fn address_of(ty: &str, address: &str, at: &str, j: usize, errors: &mut Vec<FieldError>) {
    let indexed = format!("{at}[{j}]");
    match ty {
        "IPv4" | "IPv6" => {
            let Some(parsed) = ip(address) else {
                errors.push(FieldError::invalid_str(&indexed, address, IP_MSG));
                return;
            };
            match (ty, parsed) {
                ("IPv4", IpAddr::V6(_)) => errors.push(FieldError::invalid_str(
                    at,
                    address,
                    "must be an IPv4 address",
                )),
                ("IPv6", IpAddr::V4(_)) => errors.push(FieldError::invalid_str(
                    at,
                    address,
                    "must be an IPv6 address",
                )),
                _ => {}
            }
        }
        "FQDN" => {
            for msg in dns1123_subdomain(address) {
                errors.push(FieldError::invalid_str(&indexed, address, msg));
            }
        }
        _ => {}
    }
}
