#!/usr/bin/env bash
# Fails when a generated tree (hack/codegen-trees.txt) or its CRD YAML differs from what
# kube-codegen produces now. The tree is never modified: clients are regenerated into a
# temporary directory and diffed, CRDs are compared by `kube-codegen crds --verify`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --quiet -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$PWD/target}/debug/kube-codegen"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failed=0
while read -r input output crds; do
  case "$input" in ''|'#'*) continue ;; esac
  # Same relative paths as update-codegen.sh, so the headers (which name the command) match.
  mkdir -p "$tmp/$(dirname "$input")"
  cp -R "$input" "$tmp/$input"
  if ! (cd "$tmp" && "$codegen" generate --input "$input" --output "$output" >/dev/null 2>&1); then
    echo "verify-codegen: kube-codegen failed on $input:" >&2
    (cd "$tmp" && "$codegen" generate --input "$input" --output "$output") || true
    failed=1
    continue
  fi
  if diff -ru "$output" "$tmp/$output" >"$tmp/diff"; then
    echo "verify-codegen: $output is up to date"
    continue
  fi
  failed=1
  echo "verify-codegen: $output drifted from $input:" >&2
  diff -rq "$output" "$tmp/$output" | sed \
    -e "s#^Files $output/\(.*\) and .* differ\$#  drifted: $output/\1#" \
    -e "s#^Only in $tmp/\(.*\): \(.*\)\$#  missing: \1/\2#" \
    -e "s#^Only in \($output.*\): \(.*\)\$#  not produced by kube-codegen: \1/\2#" >&2
  echo >&2
  sed -e "s#$tmp/$output#$output (regenerated)#g" "$tmp/diff" | head -60 >&2
  echo >&2
done < hack/codegen-trees.txt

# CRD YAML: built from the compiled types (the first run compiles the crates).
while read -r input output crds; do
  case "$input" in ''|'#'*) continue ;; esac
  if ! "$codegen" crds --verify --input "$input" --output "$crds"; then
    failed=1
  fi
done < hack/codegen-trees.txt

# RBAC: from the +kubebuilder:rbac markers of the sample's sources.
if ! "$codegen" rbac --verify --input sample-controller/src \
    --output sample-controller/artifacts/rbac/role.yaml --name sample-controller --namespace default; then
  failed=1
fi

if [ "$failed" -ne 0 ]; then
  echo "to fix, run: hack/update-codegen.sh" >&2
  exit 1
fi
