#!/usr/bin/env bash
# Regenerates the sample's typed clients (sample-controller/src/generated) in place.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --quiet -p kube-codegen
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
"$target_dir/debug/kube-codegen" generate \
  --input sample-controller/src/apis \
  --output sample-controller/src/generated
