#!/usr/bin/env bash
# Fails when a generated tree (hack/codegen-trees.txt), its CRD YAML, the sample's RBAC, the
# runtime's built-in apply configurations or the book's generated references differ from what
# kube-codegen produces now.
# Nothing is written: each check compares.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --quiet -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$PWD/target}/debug/kube-codegen"

failed=0
# The built-in apply configurations the runtime ships, and its features for them.
cargo test --quiet -p kube-codegen-runtime --test shipped_applyconfigurations || failed=1
"$codegen" import --verify --input examples/imported/crds --output examples/imported/src/apis || failed=1
while read -r input output crds; do
  case "$input" in ''|'#'*) continue ;; esac
  "$codegen" verify --input "$input" --output "$output" || failed=1
  # CRD YAML is built from the compiled types (the first run compiles the crates).
  [ "$crds" = - ] || "$codegen" crds --verify --input "$input" --output "$crds" || failed=1
done < hack/codegen-trees.txt

# RBAC: from the +kubebuilder:rbac markers of the sample's sources.
"$codegen" rbac --verify --input sample-controller/src \
  --output sample-controller/artifacts/rbac/role.yaml --name sample-controller --namespace default \
  || failed=1

# Admission webhook configurations: from the +kubebuilder:webhook markers of the sample's sources.
"$codegen" webhooks --verify --input sample-controller/src \
  --output sample-controller/artifacts/webhooks \
  --cert-manager-certificate default/sample-controller-webhook || failed=1

# The sample's CRDs, and their kustomize base with Foo's conversion (artifacts/deploy-webhooks).
"$codegen" crds --verify --input sample-controller/src/apis --output sample-controller/artifacts/crds \
  --conversion-service default/sample-controller-webhook:443 \
  --cert-manager-certificate default/sample-controller-webhook \
  --kustomize sample-controller/artifacts/deploy-webhooks/crds || failed=1

# The sample's API reference pages in the book.
"$codegen" docs --verify --input sample-controller/src/apis --output docs/src/reference/api || failed=1

# The book's generated references (docs/src/reference/): compared, not written.
cargo test --quiet -p kube-codegen --test reference || failed=1

if [ "$failed" -ne 0 ]; then
  echo "to fix, run: hack/update-codegen.sh" >&2
  exit 1
fi
