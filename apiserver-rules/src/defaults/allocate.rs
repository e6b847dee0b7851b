//! What kube-apiserver allocates for Services: a cluster IP from the service CIDR (with
//! `clusterIPs`, `ipFamilies` and `ipFamilyPolicy`), node ports from 30000-32767 for
//! `NodePort` and `LoadBalancer` Services, and a health-check node port for a
//! `LoadBalancer` with `externalTrafficPolicy: Local`. The real server picks at random; this
//! picks in order, so a test sees the same addresses every run. IPv4 only.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde_json::{Value, json};

use crate::field::FieldError;

/// The lowest and highest node port.
const NODE_PORTS: (u16, u16) = (30000, 32767);

/// Cluster IPs and node ports in use, and where to look for free ones next.
#[derive(Debug, Clone)]
pub struct Allocator {
    network: u32,
    bits: u32,
    size: u32,
    ips: BTreeSet<u32>,
    next_ip: u32,
    ports: BTreeSet<u16>,
    next_port: u16,
}

impl Default for Allocator {
    /// kubeadm's and kind's service CIDR, `10.96.0.0/12`.
    fn default() -> Self {
        Self::new("10.96.0.0/12").expect("a valid CIDR")
    }
}

impl Allocator {
    /// An allocator for the IPv4 `cidr` (`10.96.0.0/12`), or `None` when it is not one or
    /// has fewer than 4 addresses.
    pub fn new(cidr: &str) -> Option<Self> {
        let (ip, bits) = cidr.split_once('/')?;
        let ip: Ipv4Addr = ip.parse().ok()?;
        let bits: u32 = bits.parse().ok().filter(|b| *b <= 30)?;
        let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
        let network = u32::from(ip) & mask;
        // The network and broadcast addresses are never handed out.
        let size = (1u32 << (32 - bits)) - 2;
        // Like the real allocator, dynamic addresses come from above a band kept for
        // addresses users ask for.
        let band = (size / 16).clamp(16, 256).min(size - 1);
        let port_band = ((NODE_PORTS.1 - NODE_PORTS.0 + 1) / 32).clamp(16, 128);
        Some(Self {
            network,
            bits,
            size,
            ips: BTreeSet::new(),
            next_ip: band,
            ports: BTreeSet::new(),
            next_port: NODE_PORTS.0 + port_band,
        })
    }

    /// The first address of the range: kube-apiserver gives it to the `kubernetes` Service.
    pub fn first_ip(&self) -> String {
        Ipv4Addr::from(self.network + 1).to_string()
    }

    fn offset_of(&self, ip: &str) -> Option<u32> {
        let ip: Ipv4Addr = ip.parse().ok()?;
        let offset = u32::from(ip).checked_sub(self.network + 1)?;
        (offset < self.size).then_some(offset)
    }

    fn take_ip(&mut self) -> Option<u32> {
        for _ in 0..self.size {
            let candidate = self.next_ip;
            self.next_ip = (self.next_ip + 1) % self.size;
            if self.ips.insert(candidate) {
                return Some(candidate);
            }
        }
        None
    }

    fn take_port(&mut self) -> Option<u16> {
        let span = NODE_PORTS.1 - NODE_PORTS.0 + 1;
        for _ in 0..span {
            let candidate = self.next_port;
            self.next_port = if self.next_port == NODE_PORTS.1 {
                NODE_PORTS.0
            } else {
                self.next_port + 1
            };
            if self.ports.insert(candidate) {
                return Some(candidate);
            }
        }
        None
    }

    /// Allocates what the Service `svc` (created, or updated from `old`) needs and records
    /// it: `clusterIP`, `clusterIPs`, `ipFamilies`, `ipFamilyPolicy`, each port's
    /// `nodePort`, `healthCheckNodePort`; addresses and ports it asked for are taken if
    /// free. What `old` had and `svc` no longer needs is released. On errors nothing is
    /// allocated. A dry run (`commit` false) fills in the same values and records nothing.
    pub fn assign(
        &mut self,
        svc: &mut Value,
        old: Option<&Value>,
        commit: bool,
    ) -> Vec<FieldError> {
        let mut trial = self.clone();
        // An update keeps what it had: the old object's addresses are free to ask for.
        if let Some(old) = old {
            trial.release(old);
        }
        let errors = trial.assign_new(svc);
        if errors.is_empty() && commit {
            *self = trial;
        }
        errors
    }

    fn assign_new(&mut self, svc: &mut Value) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let Some(spec) = svc.get_mut("spec").filter(|s| s.is_object()) else {
            return errors;
        };
        let ty = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP")
            .to_owned();
        if ty == "ExternalName" {
            return errors;
        }
        let asked = spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if asked == "None" {
            spec["clusterIPs"] = json!(["None"]);
        } else if asked.is_empty() {
            match self.take_ip() {
                Some(o) => {
                    let ip = Ipv4Addr::from(self.network + 1 + o).to_string();
                    spec["clusterIP"] = json!(ip);
                    spec["clusterIPs"] = json!([ip]);
                }
                None => errors.push(FieldError::forbidden(
                    "spec.clusterIPs",
                    "failed to allocate a serviceIP: range is full",
                )),
            }
        } else {
            match self.offset_of(&asked) {
                None => errors.push(ips_error(
                    &asked,
                    format!(
                        "failed to allocate IP {asked}: the provided IP ({asked}) is not in the valid range. The range of valid IPs is {}/{}",
                        Ipv4Addr::from(self.network),
                        self.bits
                    ),
                )),
                Some(o) => {
                    if !self.ips.insert(o) {
                        errors.push(ips_error(
                            &asked,
                            format!("failed to allocate IP {asked}: provided IP is already allocated"),
                        ));
                    }
                    spec["clusterIPs"] = json!([asked]);
                }
            }
        }
        if spec
            .get("ipFamilies")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec["ipFamilies"] = json!(["IPv4"]);
        }
        if spec.get("ipFamilyPolicy").is_none_or(Value::is_null) {
            spec["ipFamilyPolicy"] = json!("SingleStack");
        }
        let wants_node_ports = ty == "NodePort"
            || (ty == "LoadBalancer"
                && spec.get("allocateLoadBalancerNodePorts") != Some(&json!(false)));
        if wants_node_ports {
            for p in spec
                .get_mut("ports")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                let asked = p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
                if asked == 0 {
                    match self.take_port() {
                        Some(n) => p["nodePort"] = json!(n),
                        None => errors.push(FieldError::forbidden(
                            "spec.ports",
                            "failed to allocate a nodePort: range is full",
                        )),
                    }
                } else {
                    self.ask_port(asked, "spec.ports[].nodePort", &mut errors);
                }
            }
        }
        if ty == "LoadBalancer" && spec.get("externalTrafficPolicy") == Some(&json!("Local")) {
            let asked = spec
                .get("healthCheckNodePort")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if asked == 0 {
                if let Some(n) = self.take_port() {
                    spec["healthCheckNodePort"] = json!(n);
                }
            } else {
                self.ask_port(asked, "spec.healthCheckNodePort", &mut errors);
            }
        }
        errors
    }

    fn ask_port(&mut self, asked: i64, field: &str, errors: &mut Vec<FieldError>) {
        let port = u16::try_from(asked)
            .ok()
            .filter(|p| (NODE_PORTS.0..=NODE_PORTS.1).contains(p));
        match port {
            None => errors.push(FieldError::invalid(
                field,
                &json!(asked),
                format!(
                    "provided port is not in the valid range. The range of valid ports is {}-{}",
                    NODE_PORTS.0, NODE_PORTS.1
                ),
            )),
            Some(p) => {
                if !self.ports.insert(p) {
                    errors.push(FieldError::invalid(
                        field,
                        &json!(asked),
                        "provided port is already allocated",
                    ));
                }
            }
        }
    }

    /// Releases what the deleted (or replaced) Service `svc` held.
    pub fn release(&mut self, svc: &Value) {
        if svc
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k != "Service")
        {
            return;
        }
        for ip in ips(svc) {
            if let Some(o) = self.offset_of(&ip) {
                self.ips.remove(&o);
            }
        }
        for port in node_ports(svc) {
            self.ports.remove(&port);
        }
    }
}

/// `spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: <detail>`.
fn ips_error(ip: &str, detail: String) -> FieldError {
    let mut e = FieldError::invalid("spec.clusterIPs", &Value::Null, detail);
    e.value = format!("[]string{{{}}}", crate::field::go_quote(ip));
    e
}

/// The cluster IPs a Service holds.
fn ips(svc: &Value) -> Vec<String> {
    let mut out: Vec<String> = svc
        .pointer("/spec/clusterIPs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    if let Some(ip) = svc.pointer("/spec/clusterIP").and_then(Value::as_str)
        && !out.iter().any(|o| o == ip)
    {
        out.push(ip.to_owned());
    }
    out.retain(|ip| !ip.is_empty() && ip != "None");
    out
}

/// The node ports a Service holds.
fn node_ports(svc: &Value) -> Vec<u16> {
    let ports = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("nodePort"));
    ports
        .chain(svc.pointer("/spec/healthCheckNodePort"))
        .filter_map(Value::as_u64)
        .filter_map(|p| u16::try_from(p).ok())
        .filter(|p| *p != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_ports_are_handed_out_in_order_and_come_back() {
        let mut a = Allocator::default();
        let mut s1 =
            json!({"kind": "Service", "spec": {"type": "NodePort", "ports": [{"port": 80}]}});
        assert!(a.assign(&mut s1, None, true).is_empty());
        assert_eq!(s1["spec"]["clusterIP"], "10.96.1.1");
        assert_eq!(s1["spec"]["clusterIPs"], json!(["10.96.1.1"]));
        assert_eq!(s1["spec"]["ipFamilies"], json!(["IPv4"]));
        assert_eq!(s1["spec"]["ports"][0]["nodePort"], 30086);
        let mut s2 =
            json!({"kind": "Service", "spec": {"clusterIP": "10.96.1.1", "ports": [{"port": 80}]}});
        let errors = a.assign(&mut s2, None, true);
        assert_eq!(errors.len(), 1, "{errors:?}");
        a.release(&s1);
        let mut s3 =
            json!({"kind": "Service", "spec": {"clusterIP": "10.96.1.1", "ports": [{"port": 80}]}});
        assert!(a.assign(&mut s3, None, true).is_empty());
        let mut headless = json!({"kind": "Service", "spec": {"clusterIP": "None"}});
        assert!(a.assign(&mut headless, None, true).is_empty());
        assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
        // An update keeps what it had.
        let mut again = s3.clone();
        assert!(a.assign(&mut again, Some(&s3), true).is_empty());
    }
}
