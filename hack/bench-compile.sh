#!/usr/bin/env bash
# What generated clients cost to compile. Writes three crates of N kinds (default 20; each
# kind namespaced with a status, every fifth with scale, every seventh read-only) under
# target/bench-compile and measures, with their dependencies already built:
#   kube       kube's `#[derive(CustomResource)]` alone
#   genclient  the same kinds with `#[derive(GenClient)]` added (clients expanded in place)
#   cli        the same kinds and the tree `kube-codegen generate` writes for them
# for each: a clean build of the crate, a rebuild after touching one kind's file, and a clean
# `cargo check`; medians of RUNS runs (default 5), then the ratios and the targets.
# `--cold` also times a cold build (every dependency) of a one-kind crate with kube's
# derive and with `GenClient`.
# Usage: hack/bench-compile.sh [N] [RUNS] [--cold]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD

kinds=20
runs=5
cold=false
positional=()
for arg in "$@"; do
  case "$arg" in
    --cold) cold=true ;;
    *) positional+=("$arg") ;;
  esac
done
[ "${#positional[@]}" -ge 1 ] && kinds=${positional[0]}
[ "${#positional[@]}" -ge 2 ] && runs=${positional[1]}

# The CLI from this workspace's own target directory; the bench crates build in theirs.
cargo build --quiet --release -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$repo/target}/release/kube-codegen"
root="$repo/target/bench-compile"
export CARGO_TARGET_DIR="$root/target"
mkdir -p "$root"

# write_crate NAME VARIANT KINDS: a crate whose API types are in src/apis/bench/v1.
write_crate() {
  local name="$1" variant="$2" n="$3" dir="$root/$1"
  rm -rf "$dir"
  mkdir -p "$dir/src/apis/bench/v1"
  local runtime_features='default-features = false'
  [ "$variant" = genclient ] && runtime_features='features = ["derive"]'
  cat >"$dir/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
kube = { version = "5.0.0", default-features = false, features = ["client", "rustls-tls", "ring", "derive", "runtime"] }
k8s-openapi = { version = "0.29.0", default-features = false, features = ["std", "latest"] }
kube-codegen-runtime = { path = "$repo/codegen-runtime", $runtime_features }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
TOML
  cp "$repo/Cargo.lock" "$dir/Cargo.lock"
  echo "pub mod bench;" >"$dir/src/apis/mod.rs"
  echo "pub mod v1;" >"$dir/src/apis/bench/mod.rs"
  {
    echo "//! +groupName=bench.example.com"
    for i in $(seq -w 1 "$n"); do echo "pub mod kind$i;"; done
  } >"$dir/src/apis/bench/v1/mod.rs"
  local derive="CustomResource" use_gen=""
  if [ "$variant" = genclient ]; then
    derive="CustomResource, GenClient"
    use_gen="use kube_codegen_runtime::GenClient;"
  fi
  for i in $(seq -w 1 "$n"); do
    local scale="" readonly=""
    if [ $((10#$i % 5)) -eq 0 ]; then
      scale=', scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.available")'
    fi
    if [ $((10#$i % 7)) -eq 0 ]; then readonly="/// +genclient:readonly"; fi
    cat >"$dir/src/apis/bench/v1/kind$i.rs" <<RS
use kube::CustomResource;
$use_gen
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind$i wants some replicas.
///
/// +genclient
$readonly
#[derive($derive, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "bench.example.com", version = "v1", kind = "Kind$i", namespaced, status = "Kind${i}Status"$scale)]
pub struct Kind${i}Spec {
    pub replicas: i32,
    pub image: String,
}

/// Status of a Kind$i.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Kind${i}Status {
    pub available: i32,
}
RS
  done
  if [ "$variant" = cli ]; then
    printf '#![allow(missing_docs)]\npub mod apis;\npub mod generated;\n' >"$dir/src/lib.rs"
    (cd "$dir" && "$codegen" generate --input src/apis --output src/generated >/dev/null)
  else
    printf '#![allow(missing_docs)]\npub mod apis;\n' >"$dir/src/lib.rs"
  fi
}

# measure DIR PREP CMD: in DIR, runs PREP then times CMD, RUNS times; prints the median
# wall time in seconds.
measure() {
  local dir="$1" prep="$2" cmd="$3"
  python3 - "$dir" "$prep" "$cmd" "$runs" <<'PY'
import statistics, subprocess, sys, time
d, prep, cmd, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
walls = []
for _ in range(runs):
    subprocess.run(prep, shell=True, cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.perf_counter()
    subprocess.run(cmd, shell=True, cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    walls.append(time.perf_counter() - start)
print(f"{statistics.median(walls):.3f}")
PY
}

echo "compile cost of $kinds kinds, medians of $runs runs, dependencies built (target/bench-compile)"
declare -A clean incr check
for variant in kube genclient cli; do
  name="bench_$variant"
  write_crate "$name" "$variant" "$kinds"
  dir="$root/$name"
  # Dependencies first, untimed.
  (cd "$dir" && cargo build --quiet && cargo check --quiet)
  clean[$variant]=$(measure "$dir" "cargo clean --quiet -p $name" "cargo build --quiet")
  incr[$variant]=$(measure "$dir" "touch src/apis/bench/v1/kind$(printf %0${#kinds}d 1).rs" "cargo build --quiet")
  check[$variant]=$(measure "$dir" "cargo clean --quiet -p $name" "cargo check --quiet")
  printf '%-10s clean build %7.2f s   rebuild after touching one kind %6.2f s   cargo check %6.2f s\n' \
    "$variant" "${clean[$variant]}" "${incr[$variant]}" "${check[$variant]}"
done
python3 - "${clean[kube]}" "${clean[genclient]}" "${clean[cli]}" \
  "${incr[kube]}" "${incr[genclient]}" "${incr[cli]}" "${check[kube]}" "${check[genclient]}" "${check[cli]}" <<'PY'
import sys
ck, cg, cc, ik, ig, ic, kk, kg, kc = map(float, sys.argv[1:])
print(f"genclient / kube: clean build {cg/ck:.2f}x, rebuild {ig/ik:.2f}x, check {kg/kk:.2f}x")
print(f"cli / kube:       clean build {cc/ck:.2f}x, rebuild {ic/ik:.2f}x, check {kc/kk:.2f}x")
met = lambda ok: "met" if ok else "MISSED"
print(f"target clean build with GenClient <= 1.5x kube's derive alone: {met(cg <= 1.5 * ck)} ({cg/ck:.2f}x)")
print(f"target rebuild with GenClient <= 1.25x kube's derive alone: {met(ig <= 1.25 * ik)} ({ig/ik:.2f}x)")
print(f"target the CLI tree no slower than the derive (clean build): {met(cc <= cg)} ({cc:.2f} s vs {cg:.2f} s)")
PY

if $cold; then
  for variant in kube genclient; do
    name="cold_$variant"
    write_crate "$name" "$variant" 1
    dir="$root/$name"
    secs=$(CARGO_TARGET_DIR="$dir/target" python3 - "$dir" <<'PY'
import subprocess, sys, time
start = time.perf_counter()
subprocess.run("cargo build --quiet", shell=True, cwd=sys.argv[1], check=True)
print(f"{time.perf_counter() - start:.1f}")
PY
)
    rm -rf "$dir/target"
    printf 'cold build, one kind, %-9s %6.1f s (every dependency, debug profile)\n' "$variant:" "$secs"
  done
fi
