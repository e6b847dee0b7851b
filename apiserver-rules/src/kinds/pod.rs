//! Pod templates: the defaults kube-apiserver gives a template's pod spec, and
//! `ValidatePodTemplateSpec` / `ValidatePodSpec` for what controllers get wrong most:
//! containers (name, image, ports, duplicate names, pull and termination-message
//! policies), volumes (name, one source) and their mounts, restart and DNS policies.

use serde_json::{Value, json};

use super::selector::port_name;
use crate::field::FieldError;
use crate::names::{dns1123_label, dns1123_subdomain};

/// `SetDefaults_PodSpec` and the container defaults, as applied to a template's `spec`
/// (see [`crate::defaults::core::pod_spec`]).
pub fn default_spec(spec: &mut Value) {
    crate::defaults::core::pod_spec(spec);
}

/// `SetDefaults_Pod` and the pod-spec defaults of a Pod's `spec` (requests default to
/// limits; see [`crate::defaults::core::pod`]).
pub fn default_pod(spec: &mut Value) {
    let mut pod = json!({"spec": spec.take()});
    crate::defaults::core::pod(&mut pod);
    *spec = pod["spec"].take();
}

/// A quantity's value (`500m`, `1Gi`, `1e3`), for comparisons.
pub fn quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let n: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * factor)
}

fn show_quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Requests and limits: not negative, and a request no larger than its limit.
fn resources(c: &Value, cp: &str, errors: &mut Vec<FieldError>) {
    let get = |k: &str| super::entries(c.get("resources").unwrap_or(&Value::Null), k);
    for k in ["limits", "requests"] {
        for (name, v) in get(k) {
            if quantity(&show_quantity(v)).is_some_and(|q| q < 0.0) {
                errors.push(FieldError::invalid_str(
                    format!("{cp}.resources.{k}[{name}]"),
                    &show_quantity(v),
                    "must be greater than or equal to 0",
                ));
            }
        }
    }
    let limits = get("limits");
    for (name, v) in get("requests") {
        let Some((_, limit)) = limits.iter().find(|(l, _)| *l == name) else {
            continue;
        };
        let (r, l) = (quantity(&show_quantity(v)), quantity(&show_quantity(limit)));
        if let (Some(r), Some(l)) = (r, l)
            && r > l
            && l >= 0.0
        {
            errors.push(FieldError::invalid_str(
                format!("{cp}.resources.requests"),
                &show_quantity(v),
                format!(
                    "must be less than or equal to {name} limit of {}",
                    show_quantity(limit)
                ),
            ));
        }
    }
}

/// `Unsupported value` with the values the server lists.
fn not_supported(field: String, value: &Value, valid: &[&str]) -> FieldError {
    FieldError::not_supported(field, value, valid)
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

/// What `validateInitContainers` forbids in an init container that is not a sidecar
/// (`restartPolicy: Always`): lifecycle hooks and probes.
fn init_containers(spec: &Value, p: &str, errors: &mut Vec<FieldError>) {
    let list = spec.get("initContainers").and_then(Value::as_array);
    for (i, c) in list.into_iter().flatten().enumerate() {
        if s(c, "restartPolicy") == "Always" {
            continue;
        }
        for field in [
            "lifecycle",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
        ] {
            if c.get(field).is_some_and(|v| !v.is_null()) {
                errors.push(FieldError::forbidden(
                    format!("{p}.initContainers[{i}].{field}"),
                    "may not be set for init containers without restartPolicy=Always",
                ));
            }
        }
    }
}

/// `ValidatePodSpec` of a (defaulted) template spec at `p` (`spec.template.spec`).
pub fn validate_spec(spec: &Value, p: &str, errors: &mut Vec<FieldError>) {
    let volumes = validate_volumes(spec, p, errors);
    let containers = spec.get("containers").and_then(Value::as_array);
    match containers {
        None => errors.push(FieldError::required(format!("{p}.containers"), "")),
        Some(list) if list.is_empty() => {
            errors.push(FieldError::required(format!("{p}.containers"), ""))
        }
        Some(list) => {
            let mut names: Vec<&str> = Vec::new();
            for (i, c) in list.iter().enumerate() {
                let cp = format!("{p}.containers[{i}]");
                container(c, &cp, &volumes, errors);
                let name = s(c, "name");
                if names.contains(&name) {
                    errors.push(FieldError::duplicate(format!("{cp}.name"), &json!(name)));
                }
                names.push(name);
            }
        }
    }
    init_containers(spec, p, errors);
    let restart = s(spec, "restartPolicy");
    if !["Always", "OnFailure", "Never"].contains(&restart) {
        errors.push(not_supported(
            format!("{p}.restartPolicy"),
            &json!(restart),
            &["Always", "OnFailure", "Never"],
        ));
    }
    let dns = s(spec, "dnsPolicy");
    if !["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"].contains(&dns) {
        errors.push(not_supported(
            format!("{p}.dnsPolicy"),
            &json!(dns),
            &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        ));
    }
    let sa = s(spec, "serviceAccountName");
    if !sa.is_empty() {
        for msg in dns1123_subdomain(sa) {
            errors.push(FieldError::invalid_str(
                format!("{p}.serviceAccountName"),
                sa,
                msg,
            ));
        }
    }
}

/// The names of the volumes without errors (the ones mounts may name).
fn validate_volumes<'a>(spec: &'a Value, p: &str, errors: &mut Vec<FieldError>) -> Vec<&'a str> {
    let mut valid = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let vp = format!("{p}.volumes[{i}]");
        let before = errors.len();
        let required = |errors: &mut Vec<FieldError>, source: &str, key: &str| {
            if v.get(source).is_some() && s(&v[source], key).is_empty() {
                errors.push(FieldError::required(format!("{vp}.{source}.{key}"), ""));
            }
        };
        required(errors, "secret", "secretName");
        required(errors, "configMap", "name");
        required(errors, "hostPath", "path");
        required(errors, "persistentVolumeClaim", "claimName");
        let name = s(v, "name");
        if name.is_empty() {
            errors.push(FieldError::required(format!("{vp}.name"), ""));
        } else {
            for msg in dns1123_label(name) {
                errors.push(FieldError::invalid_str(format!("{vp}.name"), name, msg));
            }
            if seen.contains(&name) {
                errors.push(FieldError::duplicate(format!("{vp}.name"), &json!(name)));
            }
        }
        seen.push(name);
        if errors.len() == before {
            valid.push(name);
        }
    }
    valid
}

/// One container at `cp` (`spec.containers[i]`); `volumes` are the names mounts may use.
fn container(c: &Value, cp: &str, volumes: &[&str], errors: &mut Vec<FieldError>) {
    let name = s(c, "name");
    if name.is_empty() {
        errors.push(FieldError::required(format!("{cp}.name"), ""));
    } else {
        for msg in dns1123_label(name) {
            errors.push(FieldError::invalid_str(format!("{cp}.name"), name, msg));
        }
    }
    if s(c, "image").is_empty() {
        errors.push(FieldError::required(format!("{cp}.image"), ""));
    }
    let tmp = s(c, "terminationMessagePolicy");
    if !["File", "FallbackToLogsOnError"].contains(&tmp) {
        errors.push(not_supported(
            format!("{cp}.terminationMessagePolicy"),
            &json!(tmp),
            &["File", "FallbackToLogsOnError"],
        ));
    }
    ports(c, cp, errors);
    env(c, cp, errors);
    mounts(c, cp, volumes, errors);
    let pull = s(c, "imagePullPolicy");
    if !["Always", "IfNotPresent", "Never"].contains(&pull) {
        errors.push(not_supported(
            format!("{cp}.imagePullPolicy"),
            &json!(pull),
            &["Always", "IfNotPresent", "Never"],
        ));
    }
    resources(c, cp, errors);
}

/// A container's ports: valid, unique names, port numbers in range, a known protocol.
fn ports(c: &Value, cp: &str, errors: &mut Vec<FieldError>) {
    let mut port_names: Vec<&str> = Vec::new();
    for (j, port) in c
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let pp = format!("{cp}.ports[{j}]");
        let pname = s(port, "name");
        if !pname.is_empty() {
            let msgs = port_name(pname);
            for msg in &msgs {
                errors.push(FieldError::invalid_str(
                    format!("{pp}.name"),
                    pname,
                    msg.clone(),
                ));
            }
            if msgs.is_empty() {
                if port_names.contains(&pname) {
                    errors.push(FieldError::duplicate(format!("{pp}.name"), &json!(pname)));
                }
                port_names.push(pname);
            }
        }
        let number = port
            .get("containerPort")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if number == 0 {
            errors.push(FieldError::required(format!("{pp}.containerPort"), ""));
        } else if !(1..=65535).contains(&number) {
            errors.push(FieldError::invalid(
                format!("{pp}.containerPort"),
                &json!(number),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let host = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
        if host != 0 && !(1..=65535).contains(&host) {
            errors.push(FieldError::invalid(
                format!("{pp}.hostPort"),
                &json!(host),
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = s(port, "protocol");
        if !["TCP", "UDP", "SCTP"].contains(&protocol) {
            errors.push(not_supported(
                format!("{pp}.protocol"),
                &json!(protocol),
                &["SCTP", "TCP", "UDP"],
            ));
        }
    }
}

/// A container's environment variable names: set, printable ASCII without `=`.
fn env(c: &Value, cp: &str, errors: &mut Vec<FieldError>) {
    for (k, env) in c
        .get("env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let ename = s(env, "name");
        if ename.is_empty() {
            errors.push(FieldError::required(format!("{cp}.env[{k}].name"), ""));
        } else if ename
            .chars()
            .any(|ch| !(' '..='~').contains(&ch) || ch == '=')
        {
            errors.push(FieldError::invalid_str(
                format!("{cp}.env[{k}].name"),
                ename,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
    }
}

/// A container's volume mounts: of a valid volume, each at its own path.
fn mounts(c: &Value, cp: &str, volumes: &[&str], errors: &mut Vec<FieldError>) {
    let mut paths: Vec<&str> = Vec::new();
    for (m, mount) in c
        .get("volumeMounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mp = format!("{cp}.volumeMounts[{m}]");
        let mname = s(mount, "name");
        if mname.is_empty() {
            errors.push(FieldError::required(format!("{mp}.name"), ""));
        }
        if !volumes.contains(&mname) {
            errors.push(FieldError::not_found(format!("{mp}.name"), &json!(mname)));
        }
        let path = s(mount, "mountPath");
        if path.is_empty() {
            errors.push(FieldError::required(format!("{mp}.mountPath"), ""));
        } else if paths.contains(&path) {
            errors.push(FieldError::invalid_str(
                format!("{mp}.mountPath"),
                path,
                "must be unique",
            ));
        }
        paths.push(path);
    }
}

/// Whether a label selector (`matchLabels`, `matchExpressions`) matches `labels`.
pub fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = super::entries(selector, "matchLabels")
        .into_iter()
        .all(|(k, v)| label(k) == v.as_str());
    let by_expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|e| {
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let have = label(s(e, "key"));
            match s(e, "operator") {
                "In" => have.is_some_and(|h| values.contains(&h)),
                "NotIn" => have.is_none_or(|h| !values.contains(&h)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        });
    by_labels && by_expressions
}
