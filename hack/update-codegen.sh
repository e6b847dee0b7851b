#!/usr/bin/env bash
# Regenerates every API tree listed in hack/codegen-trees.txt, in place: the runtime's
# built-in apply configurations, the imported API types, the typed clients, then the CRD YAML
# (built from the compiled types), then the sample's RBAC.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --quiet -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$PWD/target}/debug/kube-codegen"
# The built-in kinds' apply configurations the runtime ships (codegen-runtime/src/
# applyconfigurations) and its features for them, from codegen-core's table of built-in kinds.
UPDATE_GOLDEN=1 cargo test --quiet -p kube-codegen-runtime --test shipped_applyconfigurations
# Third-party CRDs imported into API types first: the trees below read them.
"$codegen" import --input examples/imported/crds --output examples/imported/src/apis

grep -v '^#' hack/codegen-trees.txt | while read -r input output crds; do
  [ -n "$input" ] || continue
  "$codegen" generate --input "$input" --output "$output"
  [ "$crds" = - ] || "$codegen" crds --input "$input" --output "$crds"
done

# RBAC from the +kubebuilder:rbac markers in the sample's sources.
"$codegen" rbac --input sample-controller/src \
  --output sample-controller/artifacts/rbac/role.yaml --name sample-controller --namespace default

# Admission webhook configurations from the +kubebuilder:webhook markers in the sample's sources.
"$codegen" webhooks --input sample-controller/src --output sample-controller/artifacts/webhooks \
  --cert-manager-certificate default/sample-controller-webhook

# The sample's CRDs: artifacts/crds converts as `None` and names no Service, so applying it
# alone is always safe; artifacts/deploy-webhooks/crds is a kustomize base of those CRDs with
# Foo's conversion through the sample's webhook Service, for a cluster that runs it
# (`kubectl apply -k artifacts/deploy-webhooks/`).
"$codegen" crds --input sample-controller/src/apis --output sample-controller/artifacts/crds \
  --conversion-service default/sample-controller-webhook:443 \
  --cert-manager-certificate default/sample-controller-webhook \
  --kustomize sample-controller/artifacts/deploy-webhooks/crds

# The sample's API reference pages in the book, from the same CRDs.
"$codegen" docs --input sample-controller/src/apis --output docs/src/reference/api

# The book's references, from the code as it is now (markers, CLI help, contract cases).
hack/update-docs.sh
