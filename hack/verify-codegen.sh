#!/usr/bin/env bash
# Fails when sample-controller/src/generated differs from what kube-codegen produces now.
# Regenerates into a temporary directory and diffs; the working tree is never modified.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --quiet -p kube-codegen
target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
codegen="$target_dir/debug/kube-codegen"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Same relative paths as update-codegen.sh, so the headers (which name the command) match.
mkdir -p "$tmp/sample-controller/src"
cp -R sample-controller/src/apis "$tmp/sample-controller/src/apis"
(cd "$tmp" && "$codegen" generate --input sample-controller/src/apis --output sample-controller/src/generated 2>/dev/null) || {
  echo "verify-codegen: kube-codegen failed on sample-controller/src/apis:" >&2
  (cd "$tmp" && "$codegen" generate --input sample-controller/src/apis --output sample-controller/src/generated) || true
  exit 1
}

gen=sample-controller/src/generated
if diff -ru "$gen" "$tmp/$gen" >"$tmp/diff"; then
  echo "verify-codegen: $gen is up to date"
  exit 0
fi
echo "verify-codegen: generated code drifted from the API types:" >&2
diff -rq "$gen" "$tmp/$gen" | sed \
  -e "s#^Files $gen/\(.*\) and .* differ\$#  drifted: $gen/\1#" \
  -e "s#^Only in $tmp/\(.*\): \(.*\)\$#  missing: \1/\2#" \
  -e "s#^Only in \($gen.*\): \(.*\)\$#  not produced by kube-codegen: \1/\2#" >&2
echo >&2
sed -e "s#$tmp/$gen#$gen (regenerated)#g" "$tmp/diff" | head -60 >&2
echo >&2
echo "to fix, run: hack/update-codegen.sh" >&2
exit 1
