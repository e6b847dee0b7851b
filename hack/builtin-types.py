#!/usr/bin/env python3
"""Writes apiserver-rules/src/types.json: the shape of every built-in kind the fake
serves, as the Kubernetes API defines it.

Usage: hack/builtin-types.py KUBERNETES_SOURCE_DIR [OUTPUT]

KUBERNETES_SOURCE_DIR is a Kubernetes source tree (for example the one
../shared/tools/real-apiserver/build.sh extracts, ROOT/src/deps/github.com/openshift/kubernetes).
It reads two things there:
  api/openapi-spec/v3/*.json     field names, JSON types and formats, required fields,
                                 defaults, list and map types, patch strategies
  staging/src/k8s.io/**/generated.proto   protobuf field numbers
  staging/src/k8s.io/**/types.go          which Go fields are pointers, omitempty or omitzero
and keeps, for each type reachable from the served kinds, only what the fake uses. The
output is data; regenerate it when moving to a new Kubernetes version and review the diff.
"""

import json
import os
import re
import sys

# (OpenAPI file stem, group/version, kinds) the fake serves.
SERVED = [
    ("api__v1", "v1", ["Namespace", "Pod", "Service", "ConfigMap", "Secret", "Event", "Node",
                       "ServiceAccount", "Endpoints", "PersistentVolumeClaim"]),
    ("apis__apps__v1", "apps/v1", ["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"]),
    ("apis__batch__v1", "batch/v1", ["Job", "CronJob"]),
    ("apis__events.k8s.io__v1", "events.k8s.io/v1", ["Event"]),
    ("apis__coordination.k8s.io__v1", "coordination.k8s.io/v1", ["Lease"]),
    ("apis__rbac.authorization.k8s.io__v1", "rbac.authorization.k8s.io/v1",
     ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]),
    ("apis__networking.k8s.io__v1", "networking.k8s.io/v1",
     ["Ingress", "IngressClass", "NetworkPolicy"]),
    ("apis__policy__v1", "policy/v1", ["PodDisruptionBudget"]),
    ("apis__autoscaling__v2", "autoscaling/v2", ["HorizontalPodAutoscaler"]),
    ("apis__discovery.k8s.io__v1", "discovery.k8s.io/v1", ["EndpointSlice"]),
    ("apis__scheduling.k8s.io__v1", "scheduling.k8s.io/v1", ["PriorityClass"]),
    ("apis__apiextensions.k8s.io__v1", "apiextensions.k8s.io/v1", ["CustomResourceDefinition"]),
    ("apis__autoscaling__v1", "autoscaling/v1", []),
    ("apis__admissionregistration.k8s.io__v1", "admissionregistration.k8s.io/v1",
     ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]),
]
# Types a request body may be besides the kinds: the scale subresource, delete options,
# the access reviews.
EXTRA = [
    ("apis__apps__v1", "autoscaling/v1/Scale", "io.k8s.api.autoscaling.v1.Scale"),
    ("api__v1", "meta/DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"),
    # The access reviews (`kubectl auth can-i` sends them as protobuf), which are not stored.
    ("apis__authorization.k8s.io__v1", "authorization.k8s.io/v1/SelfSubjectAccessReview",
     "io.k8s.api.authorization.v1.SelfSubjectAccessReview"),
    ("apis__authorization.k8s.io__v1", "authorization.k8s.io/v1/SelfSubjectRulesReview",
     "io.k8s.api.authorization.v1.SelfSubjectRulesReview"),
    ("apis__authorization.k8s.io__v1", "authorization.k8s.io/v1/SubjectAccessReview",
     "io.k8s.api.authorization.v1.SubjectAccessReview"),
    ("apis__authorization.k8s.io__v1", "authorization.k8s.io/v1/LocalSubjectAccessReview",
     "io.k8s.api.authorization.v1.LocalSubjectAccessReview"),
    ("apis__authentication.k8s.io__v1", "authentication.k8s.io/v1/SelfSubjectReview",
     "io.k8s.api.authentication.v1.SelfSubjectReview"),
]

PROTO_DIRS = [
    "staging/src/k8s.io/api",
    "staging/src/k8s.io/apimachinery/pkg",
    "staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
]

# Types with their own JSON form, not an object of fields.
SPECIAL = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "microtime",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": "any",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": "any",
}


def proto_fields(root):
    """{message full name: {field name: (number, type full name)}} from every generated.proto."""
    out = {}
    for rel in PROTO_DIRS:
        for base, _, files in os.walk(os.path.join(root, rel)):
            if "generated.proto" not in files:
                continue
            text = open(os.path.join(base, "generated.proto")).read()
            package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
            for m in re.finditer(r"^message (\w+) \{(.*?)^\}", text, re.M | re.S):
                fields = {}
                for f in re.finditer(r"^\s+(?:optional |repeated )?(map<[^>]+>|[\w.]+) (\w+) = (\d+);",
                                     m.group(2), re.M):
                    ty = f.group(1)
                    if ty.startswith("."):
                        ty = ty[1:]
                    elif "." not in ty and ty[0].isupper():
                        ty = package + "." + ty
                    fields[f.group(2)] = (int(f.group(3)), ty)
                out[package + "." + m.group(1)] = fields
    return out


def norm(name):
    """Field names as protobuf spells them: `$ref` is `ref`, `x-kubernetes-list-type` is
    `xKubernetesListType`."""
    return name.replace("$", "").replace("-", "").lower()


def proto_path(protos, message, prop, depth=0):
    """The protobuf field numbers leading to JSON property `prop` of `message`: one number,
    or more when Go embeds a struct whose fields JSON inlines."""
    fields = protos.get(message, {})
    for name, (number, _) in fields.items():
        if norm(name) == norm(prop):
            return [number]
    if depth > 2:
        return None
    for name, (number, ty) in fields.items():
        if ty in protos:
            inner = proto_path(protos, ty, prop, depth + 1)
            if inner:
                return [number] + inner
    return None


def go_flags(root):
    """{(package dir, struct): {json name: (pointer, omitempty, omitzero)}} from the Go types;
    an inlined embedded struct contributes its own fields."""
    structs = {}
    for rel in PROTO_DIRS:
        for base, _, files in os.walk(os.path.join(root, rel)):
            for fn in files:
                if not fn.endswith(".go") or fn.endswith("_test.go") or fn.startswith(("zz_", "generated")):
                    continue
                src = open(os.path.join(base, fn)).read()
                for m in re.finditer(r"^type (\w+) struct \{(.*?)^\}", src, re.S | re.M):
                    fields = {}
                    embeds = []
                    for line in m.group(2).splitlines():
                        t = re.match(r"^\s+(?:(\w+)\s+)?(\S+)\s+`(.*)`", line)
                        if not t or 'json:"' not in t.group(3):
                            continue
                        js = re.search(r'json:"([^"]*)"', t.group(3)).group(1).split(",")
                        if "inline" in js:
                            embeds.append(t.group(2).lstrip("*").split(".")[-1])
                            continue
                        omit = "omitempty" in js or "omitzero" in js
                        fields[js[0]] = (t.group(2).startswith("*"), omit, "omitzero" in js)
                    structs[(os.path.relpath(base, root), m.group(1))] = (fields, embeds)
    out = {}
    for (d, name), (fields, embeds) in structs.items():
        merged = dict(fields)
        for e in embeds:
            inner = structs.get((d, e), ({}, []))[0]
            for k, v in inner.items():
                merged.setdefault(k, v)
        out[(d, name)] = merged
    return out


def go_dir(name):
    """io.k8s.api.core.v1.Pod -> (staging/src/k8s.io/api/core/v1, Pod)."""
    pkg, _, ty = name.rpartition(".")
    if pkg.startswith("io.k8s.apiextensions-apiserver."):
        rel = "apiextensions-apiserver/" + pkg[len("io.k8s.apiextensions-apiserver."):].replace(".", "/")
    else:
        rel = pkg[len("io.k8s."):].replace(".", "/")
    return "staging/src/k8s.io/" + rel, ty


def openapi_name_to_proto(name):
    """io.k8s.api.core.v1.Pod -> k8s.io.api.core.v1.Pod (and the apimachinery ones)."""
    if name.startswith("io.k8s.apiextensions-apiserver."):
        return "k8s.io.apiextensions_apiserver." + name[len("io.k8s.apiextensions-apiserver."):]
    return "k8s.io." + name[len("io.k8s."):]


def ref_name(schema):
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf", [])) == 1:
        ref = schema["allOf"][0].get("$ref")
    return ref.rsplit("/", 1)[1] if ref else None


def field(schema, keep, protos, numbers=None):
    """A compact descriptor of one property's schema."""
    out = {}
    ref = ref_name(schema)
    if ref:
        if ref in SPECIAL:
            out["t"] = SPECIAL[ref]
        else:
            out["t"] = "ref"
            out["ref"] = ref
            keep.append(ref)
    else:
        t = schema.get("type")
        fmt = schema.get("format", "")
        if t == "string":
            out["t"] = "bytes" if fmt == "byte" else "string"
        elif t == "integer":
            out["t"] = "int32" if fmt == "int32" else "int64"
        elif t == "number":
            out["t"] = "float64"
        elif t == "boolean":
            out["t"] = "bool"
        elif t == "array":
            out["t"] = "list"
            out["items"] = field(schema.get("items", {}), keep, protos)
        elif t == "object" and isinstance(schema.get("additionalProperties"), dict):
            out["t"] = "map"
            out["values"] = field(schema["additionalProperties"], keep, protos)
        else:
            out["t"] = "any"
    for key, short in [("x-kubernetes-list-type", "list"), ("x-kubernetes-list-map-keys", "keys"),
                       ("x-kubernetes-map-type", "mapType"), ("x-kubernetes-patch-merge-key", "merge"),
                       ("x-kubernetes-patch-strategy", "strategy"), ("default", "default")]:
        if key in schema:
            out[short] = schema[key]
    if numbers:
        out["n"] = numbers[0] if len(numbers) == 1 else numbers
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    output = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "apiserver-rules", "src", "types.json")
    protos = proto_fields(root)
    flags = go_flags(root)
    schemas = {}
    kinds = {}
    for stem, gv, names in SERVED:
        doc = json.load(open(os.path.join(root, "api", "openapi-spec", "v3", stem + "_openapi.json")))
        defs = doc["components"]["schemas"]
        schemas.update(defs)
        for name, s in defs.items():
            for gvk in s.get("x-kubernetes-group-version-kind", []):
                group = gvk["group"]
                av = f"{group}/{gvk['version']}" if group else gvk["version"]
                if av == gv and gvk["kind"] in names:
                    kinds[f"{gv}/{gvk['kind']}"] = name
    for stem, key, name in EXTRA:
        doc = json.load(open(os.path.join(root, "api", "openapi-spec", "v3", stem + "_openapi.json")))
        schemas.update(doc["components"]["schemas"])
        kinds[key] = name
    types = {}
    keep = list(kinds.values())
    while keep:
        name = keep.pop()
        if name in types or name in SPECIAL:
            continue
        s = schemas[name]
        message = openapi_name_to_proto(name)
        go = flags.get(go_dir(name), {})
        fields = {}
        for prop, ps in sorted(s.get("properties", {}).items()):
            # A kind's own apiVersion and kind are TypeMeta, which is not in its message.
            type_meta = prop in ("apiVersion", "kind") and "x-kubernetes-group-version-kind" in s
            numbers = None if type_meta else proto_path(protos, message, prop)
            fields[prop] = field(ps, keep, protos, numbers)
            pointer, omit, omitzero = go.get(prop, (False, True, False))
            if pointer:
                fields[prop]["ptr"] = 1
            if not omit:
                fields[prop]["keep"] = 1
            if omitzero:
                # A zero struct (a zero time) is left out, not written as `{}` or `null`.
                fields[prop]["omitzero"] = 1
        t = {"fields": fields}
        if s.get("required"):
            t["required"] = sorted(s["required"])
        if s.get("x-kubernetes-map-type"):
            t["mapType"] = s["x-kubernetes-map-type"]
        types[name] = t
    missing = sorted(f"{gv}/{k}" for _, gv, ks in SERVED for k in ks if f"{gv}/{k}" not in kinds)
    if missing:
        sys.exit(f"not found in the OpenAPI documents: {', '.join(missing)}")
    data = {
        "generated": "by hack/builtin-types.py from a Kubernetes source tree; do not edit",
        "kinds": dict(sorted(kinds.items())),
        "types": dict(sorted(types.items())),
    }
    os.makedirs(os.path.dirname(output), exist_ok=True)
    tmp = output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"), sort_keys=False)
        f.write("\n")
    os.replace(tmp, output)
    print(f"wrote {output}: {len(kinds)} kinds, {len(types)} types")


if __name__ == "__main__":
    main()
