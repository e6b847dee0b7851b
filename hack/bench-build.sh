#!/usr/bin/env bash
# What a new operator costs to build, against what kube-rs users build today.
#
#   init-cold-build   `cargo build` from nothing (a fresh CARGO_TARGET_DIR, the dev profile
#                     init writes) of the crate `kube-codegen init` writes, against a plain
#                     kube-rs controller crate (hack/bench-build/plain: a CustomResource
#                     derive and Controller::run on it) with the same kube, k8s-openapi,
#                     serde, schemars, tokio and tracing lines and the same profile.
#   imported-compile  `cargo build` of a crate holding CRDs imported with `kube-codegen
#                     import` (and the clients `kube-codegen generate` writes for them),
#                     against a crate holding kopium's output for the same CRDs (`kopium -A`,
#                     one module per CRD): the crate alone, its dependencies already built,
#                     without incremental compilation. The types alone (ours without the
#                     clients of src/generated) are timed too, and so is ours imported with
#                     `--apply-configurations=false` (types, clients, listers and informers,
#                     no apply configurations); both are printed above the results.
# The two sides alternate, BENCH_ROUNDS rounds each; the figures are medians, in seconds.
# The init step itself (which builds the crate once to write its CRDs) is timed once and
# printed above the results.
#
# Variables:
#   BENCH_ROUNDS  rounds of each comparison (default 1: a cold build takes minutes)
#   BENCH_CRDS    files or directories of CRDs to import (default: the real-world CRDs of
#                 codegen-cli/tests/testdata/compat, latest versions, and examples/imported/crds)
#   BENCH_ONLY    `init` or `imported` to run one comparison (default: both)
#   BENCH_TIMINGS a directory to keep cargo's --timings report of the init crate's cold builds
#                 in (init-cold-build-<round>.html; default: none, no --timings)
#   BENCH_LOCK    the lock file taken around every cargo command (default /tmp/cargo.lock;
#                 empty: none). The script takes it itself: do not run it under flock.
#   KOPIUM        a kopium binary (default: on PATH, or target/bench-build/kopium/bin/kopium,
#                 installed there with `cargo install kopium --locked` when missing)
# Needs: cargo, flock, awk; python3 with PyYAML for imported-compile (kopium takes one CRD a
# file: the inputs are split); the crates of this workspace's Cargo.lock in cargo's registry
# cache (builds run with --offline when they are all there; otherwise cargo may download
# from the registry, its only network use). Each cold build writes a few GB into its own
# target directory under target/bench-build, deleted when it is done.
# Usage: hack/bench-build.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

rounds=${BENCH_ROUNDS:-1}
only=${BENCH_ONLY:-}
timings=${BENCH_TIMINGS:-}
lock=${BENCH_LOCK-/tmp/cargo.lock}
crd_inputs=${BENCH_CRDS:-"codegen-cli/tests/testdata/compat/velero-v1.17.0 codegen-cli/tests/testdata/compat/gateway-api-v1.6.0 examples/imported/crds"}

mkdir -p "$repo/target/bench-build"
work=$(mktemp -d "$repo/target/bench-build/run.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# locked CMD...: CMD under the shared cargo lock (held for this command only).
locked() {
  if [ -n "$lock" ]; then flock "$lock" "$@"; else "$@"; fi
}

# now: seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }

# timed_build SECONDS_VAR CMD...: runs CMD under the lock and stores its wall time (the time
# waiting for the lock left out) in SECONDS_VAR.
timed_build() {
  local var="$1"
  shift
  local out="$work/timed.$$"
  locked bash -c 'start=$(date +%s.%N); "$@" || exit $?; end=$(date +%s.%N); awk -v s="$start" -v e="$end" "BEGIN { printf \"%.1f\n\", e - s }" >"'"$out"'"' timed "$@"
  printf -v "$var" '%s' "$(cat "$out")"
  rm -f "$out"
}

# median FIGURE...: the median of the figures.
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B to two places.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The CLI from this workspace's own target directory (the dev profile: it is not timed).
echo "bench-build: building kube-codegen" >&2
locked cargo build --quiet -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$repo/target}/debug/kube-codegen"
# The crates below build in their own target directories.
unset CARGO_TARGET_DIR

# Offline when the registry cache holds every crate of the workspace's lock file (checked on
# the workspace itself; the bench crates' dependencies are a subset of it).
if locked cargo fetch --offline --quiet >/dev/null 2>&1; then
  export CARGO_NET_OFFLINE=true
  echo "bench-build: the registry cache has the workspace's crates; building offline" >&2
else
  echo "bench-build: the registry cache lacks crates; cargo may download them" >&2
fi

# dep_line CRATE MANIFEST: the dependency line of CRATE in MANIFEST.
dep_line() { grep -E "^$1 = " "$2"; }

results=()

init_cold_build() {
  local ours="$work/initop" plain="$work/plain-op" seconds
  echo "bench-build: kube-codegen init (it builds the crate once, in a fresh target directory, to write its CRDs)" >&2
  timed_build seconds env CARGO_TARGET_DIR="$work/target-init" "$codegen" init "$ours" \
    --group batch.example.com --version v1 --kind Backup --kube-codegen-path "$repo" >/dev/null
  rm -rf "$work/target-init"
  echo "init (writes the crate, builds it for its CRDs): ${seconds} s" 
  rm -rf "$ours/Cargo.lock" "$ours/target"

  # The plain kube-rs controller: init's dependency lines for the crates it uses too.
  mkdir -p "$plain/src"
  {
    printf '[package]\nname = "plain-op"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n[dependencies]\n'
    for dep in kube k8s-openapi schemars serde serde_json tokio futures tracing tracing-subscriber; do
      dep_line "$dep" "$ours/Cargo.toml"
    done
    printf '\n[workspace]\n\n'
    sed -n '/^\[profile/,$p' "$ours/Cargo.toml"
  } >"$plain/Cargo.toml"
  cp "$repo/hack/bench-build/plain/main.rs" "$plain/src/main.rs"
  # Both resolve the versions this workspace builds with.
  cp "$repo/Cargo.lock" "$ours/Cargo.lock"
  cp "$repo/Cargo.lock" "$plain/Cargo.lock"

  local ours_s=() plain_s=() round
  for round in $(seq 1 "$rounds"); do
    for side in ours plain; do
      local dir=$ours
      [ "$side" = plain ] && dir=$plain
      echo "bench-build: round $round: cold cargo build of $(basename "$dir")" >&2
      local flags=(--quiet)
      [ -n "$timings" ] && [ "$side" = ours ] && flags+=(--timings)
      timed_build seconds env CARGO_TARGET_DIR="$work/target-$side" cargo build "${flags[@]}" --manifest-path "$dir/Cargo.toml"
      if [ -n "$timings" ] && [ "$side" = ours ]; then
        mkdir -p "$timings"
        cp "$work/target-$side/cargo-timings/cargo-timing.html" "$timings/init-cold-build-$round.html"
      fi
      rm -rf "$work/target-$side"
      echo "  $side: $seconds s" >&2
      if [ "$side" = ours ]; then ours_s+=("$seconds"); else plain_s+=("$seconds"); fi
    done
  done
  local o p
  o=$(median "${ours_s[@]}")
  p=$(median "${plain_s[@]}")
  results+=("init-cold-build: ours $o, kube-rs $p, ratio $(ratio "$o" "$p")")
}

# The kopium binary, installed under target/ when there is none.
find_kopium() {
  if [ -n "${KOPIUM:-}" ]; then
    echo "$KOPIUM"
  elif command -v kopium >/dev/null; then
    command -v kopium
  else
    local root="$repo/target/bench-build/kopium"
    if [ ! -x "$root/bin/kopium" ]; then
      echo "bench-build: installing kopium into $root" >&2
      locked cargo install --quiet kopium --locked --root "$root" >&2 || return 1
    fi
    echo "$root/bin/kopium"
  fi
}

# split_crds OUT FILE...: every CustomResourceDefinition in FILEs (documents, and the items of
# `List`s), one file each, as `kopium -f` takes them.
split_crds() {
  python3 - "$@" <<'PY'
import sys, yaml
out, n = sys.argv[1], 0
for path in sys.argv[2:]:
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if not isinstance(doc, dict):
                continue
            items = (doc.get("items") or []) if doc.get("kind") == "List" else [doc]
            for crd in items:
                if isinstance(crd, dict) and crd.get("kind") == "CustomResourceDefinition":
                    n += 1
                    with open(f"{out}/{n:02d}.yaml", "w") as w:
                        yaml.safe_dump(crd, w, sort_keys=False)
PY
}

imported_compile() {
  local kopium
  if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "bench-build: imported-compile needs python3 with PyYAML (to split the CRDs into one file each for kopium)" >&2
    results+=("imported-compile: skipped (python3 with PyYAML not installed)")
    return
  fi
  if ! kopium=$(find_kopium) || [ ! -x "$kopium" ]; then
    echo "bench-build: kopium is not installed and could not be (cargo install kopium --locked)" >&2
    results+=("imported-compile: skipped (kopium not installed)")
    return
  fi
  local files=() input
  for input in $crd_inputs; do
    if [ -d "$input" ]; then
      files+=("$input"/*.yaml)
    else
      files+=("$input")
    fi
  done
  mkdir -p "$work/crds"
  split_crds "$work/crds" "${files[@]}"
  local count
  count=$(find "$work/crds" -name '*.yaml' | wc -l)

  # Ours: import, generate, and a lib.rs as examples/imported has it.
  local ours="$work/imported-ours" theirs="$work/imported-kopium"
  mkdir -p "$ours/src" "$theirs/src"
  cp -r "$work/crds" "$ours/crds"
  (cd "$ours" && "$codegen" import --input crds --output src/apis >/dev/null 2>&1)
  "$codegen" generate --input "$ours/src/apis" --output "$ours/src/generated" >/dev/null 2>&1
  sed -e "s|@REPO@|$repo|" "$repo/hack/bench-build/imported-ours.toml" >"$ours/Cargo.toml"
  cp "$repo/hack/bench-build/imported-ours-lib.rs" "$ours/src/lib.rs"

  # Ours without the clients: the imported types alone, the part kopium writes too.
  local types="$work/imported-types"
  mkdir -p "$types/src"
  cp -r "$ours/src/apis" "$types/src/apis"
  # kopium's dependencies, and the runtime: the types' JSON codec (`struct_codec!`) is there.
  sed -e 's/^name = "imported-kopium"/name = "imported-types"/' \
    -e "s|^\\[dependencies\\]\$|[dependencies]\\nkube-codegen-runtime = { path = \"$repo/codegen-runtime\", default-features = false }|" \
    "$repo/hack/bench-build/imported-kopium.toml" >"$types/Cargo.toml"
  printf '%s\n' '//! The types `kube-codegen import` writes, without the clients.' '#[allow(missing_docs)]' 'pub mod apis;' >"$types/src/lib.rs"

  # Ours imported with --apply-configurations=false: no apply configurations.
  local noac="$work/imported-noac"
  mkdir -p "$noac/src"
  cp -r "$work/crds" "$noac/crds"
  (cd "$noac" && "$codegen" import --input crds --output src/apis --apply-configurations=false >/dev/null 2>&1)
  "$codegen" generate --input "$noac/src/apis" --output "$noac/src/generated" >/dev/null 2>&1
  sed -e "s|@REPO@|$repo|" -e 's/^name = "imported-ours"/name = "imported-noac"/' "$repo/hack/bench-build/imported-ours.toml" >"$noac/Cargo.toml"
  cp "$repo/hack/bench-build/imported-ours-lib.rs" "$noac/src/lib.rs"

  # kopium's: one module per CRD.
  cp "$repo/hack/bench-build/imported-kopium.toml" "$theirs/Cargo.toml"
  local crd name
  : >"$theirs/src/lib.rs"
  printf '%s\n' '//! CRDs written by kopium, one module per CRD.' '#![allow(unused_imports)]' >>"$theirs/src/lib.rs"
  for crd in "$work/crds"/*.yaml; do
    name=$(awk '/^metadata:/ { m = 1; next } m && /^  name:/ { print $2; exit }' "$crd" | tr -c 'a-z0-9\n' '_')
    "$kopium" -f "$crd" -A >"$theirs/src/$name.rs"
    printf '#[allow(missing_docs)]\npub mod %s;\n' "$name" >>"$theirs/src/lib.rs"
  done
  cp "$repo/Cargo.lock" "$ours/Cargo.lock"
  cp "$repo/Cargo.lock" "$theirs/Cargo.lock"
  cp "$repo/Cargo.lock" "$types/Cargo.lock"
  cp "$repo/Cargo.lock" "$noac/Cargo.lock"
  local lines_ours lines_theirs
  lines_ours=$(find "$ours/src" -name '*.rs' -exec cat {} + | wc -l)
  lines_theirs=$(find "$theirs/src" -name '*.rs' -exec cat {} + | wc -l)
  echo "imported CRDs: $count; lines of Rust: ours $lines_ours (types $(find "$types/src" -name '*.rs' -exec cat {} + | wc -l), without apply configurations $(find "$noac/src" -name '*.rs' -exec cat {} + | wc -l)), kopium $lines_theirs"

  # Dependencies first (one target directory: the two crates share most of them).
  export CARGO_INCREMENTAL=0
  local target="$work/target-imported" seconds
  for dir in "$ours" "$types" "$noac" "$theirs"; do
    echo "bench-build: building $(basename "$dir") and its dependencies" >&2
    locked env CARGO_TARGET_DIR="$target" cargo build --quiet --manifest-path "$dir/Cargo.toml"
  done
  local ours_s=() types_s=() noac_s=() theirs_s=() round
  for round in $(seq 1 "$rounds"); do
    for dir in "$ours" "$types" "$noac" "$theirs"; do
      touch "$dir/src/lib.rs"
      timed_build seconds env CARGO_TARGET_DIR="$target" cargo build --quiet --manifest-path "$dir/Cargo.toml"
      echo "  round $round: $(basename "$dir"): $seconds s" >&2
      case "$dir" in
        "$ours") ours_s+=("$seconds") ;;
        "$types") types_s+=("$seconds") ;;
        "$noac") noac_s+=("$seconds") ;;
        *) theirs_s+=("$seconds") ;;
      esac
    done
  done
  unset CARGO_INCREMENTAL
  rm -rf "$target"
  local o t
  o=$(median "${ours_s[@]}")
  t=$(median "${theirs_s[@]}")
  echo "imported-compile, the types alone (no clients): ours $(median "${types_s[@]}") s, ratio $(ratio "$(median "${types_s[@]}")" "$t")"
  echo "imported-compile, --apply-configurations=false (types, clients, listers, informers): ours $(median "${noac_s[@]}") s, ratio $(ratio "$(median "${noac_s[@]}")" "$t")"
  results+=("imported-compile: ours $o, kopium $t, ratio $(ratio "$o" "$t")")
}

[ "$only" = imported ] || init_cold_build
[ "$only" = init ] || imported_compile

echo
printf '%s\n' "${results[@]}"
