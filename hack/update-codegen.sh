#!/usr/bin/env bash
# Regenerates every API tree listed in hack/codegen-trees.txt, in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --quiet -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$PWD/target}/debug/kube-codegen"
grep -v '^#' hack/codegen-trees.txt | while read -r input output; do
  [ -n "$input" ] || continue
  "$codegen" generate --input "$input" --output "$output"
done

# CRD YAML needs the compiled schemas: the sample writes its own, one file per CRD.
rm -f sample-controller/artifacts/crds/*.yaml
cargo run --quiet -p sample-controller -- --write-crds sample-controller/artifacts/crds

# RBAC from the +kubebuilder:rbac markers in the sample's sources.
"$codegen" rbac --input sample-controller/src \
  --output sample-controller/artifacts/rbac/role.yaml --name sample-controller --namespace default
