#!/usr/bin/env bash
# Measures `kube-codegen generate` as a whole process: wall time and peak memory, on a
# synthetic API tree of N kinds (default 500, one group, each with spec and status) and on
# the sample's API. Usage: hack/bench-codegen.sh [N] [RUNS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

kinds="${1:-500}"
runs="${2:-5}"
cargo build --quiet --release -p kube-codegen
codegen="${CARGO_TARGET_DIR:-$PWD/target}/release/kube-codegen"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A synthetic tree: bench/v1/kindNNN.rs, one CustomResource per file.
mkdir -p "$tmp/apis/bench/v1"
{
  echo "//! +groupName=bench.example.com"
  for i in $(seq -w 1 "$kinds"); do echo "pub mod kind$i;"; done
} >"$tmp/apis/bench/v1/mod.rs"
for i in $(seq -w 1 "$kinds"); do
  cat >"$tmp/apis/bench/v1/kind$i.rs" <<RS
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Kind$i wants some replicas.
///
/// +genclient
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "bench.example.com", version = "v1", kind = "Kind$i", namespaced, status = "Kind${i}Status")]
pub struct Kind${i}Spec {
    pub replicas: i32,
    pub image: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Kind${i}Status {
    pub available: i32,
}
RS
done

# Runs the command RUNS times into fresh output directories; prints the median wall time
# and the largest peak RSS of the child processes.
measure() {
  local label="$1" input="$2"
  python3 - "$codegen" "$input" "$tmp/out" "$runs" "$label" <<'PY'
import resource, shutil, statistics, subprocess, sys, time
codegen, input_dir, out, runs, label = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
walls = []
for _ in range(runs):
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([codegen, "generate", "--input", input_dir, "--output", out], check=True,
                   stderr=subprocess.DEVNULL)
    walls.append(time.perf_counter() - start)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
files = sum(1 for _ in __import__("pathlib").Path(out).rglob("*.rs"))
med = statistics.median(walls)
print(f"{label:<22} median {med*1000:8.1f} ms  min {min(walls)*1000:8.1f} ms  peak RSS {peak_kib/1024:7.1f} MiB  {files:5d} files", file=sys.stderr)
print(f"RESULT {med:.6f} {files} {peak_kib/1024:.1f}")
PY
}

if [ -n "${GO_CODEGEN:-}" ]; then
  echo "Go's generators vs kube-codegen generate on $kinds kinds, $runs runs each, alternating"
  python3 - "$codegen" "$tmp/apis" "$tmp/out" "$runs" "$kinds" "$GO_CODEGEN" <<'PY'
import shlex, shutil, statistics, subprocess, sys, time
codegen, input_dir, out, runs, kinds, go = sys.argv[1:7]
go_cmd = shlex.split(go) + [kinds]
subprocess.run(go_cmd, check=True, stdout=subprocess.DEVNULL)  # builds the generators once
ours, theirs = [], []
for _ in range(int(runs)):
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([codegen, "generate", "--input", input_dir, "--output", out], check=True,
                   stderr=subprocess.DEVNULL)
    ours.append(time.perf_counter() - start)
    start = time.perf_counter()
    subprocess.run(go_cmd, check=True, stdout=subprocess.DEVNULL)
    theirs.append(time.perf_counter() - start)
o, g = statistics.median(ours), statistics.median(theirs)
print(f"kube-codegen median {o*1000:8.1f} ms; Go's three generators median {g*1000:8.1f} ms: {g/o:.1f}x")
print(f"target 50x Go's generators: {'met' if g / o >= 50 else 'MISSED'} ({g/o:.1f}x)")
PY
fi

echo "kube-codegen generate, $runs runs each (release build)"
synthetic=$(measure "synthetic ($kinds kinds)" "$tmp/apis" | awk '/^RESULT/ {print $2, $4}')
sample=$(measure "sample" "sample-controller/src/apis" | awk '/^RESULT/ {print $2}')
python3 -c "
(s, mem), k, n = map(float, '$synthetic'.split()), float('$sample'), $kinds
print(f'per kind: {s/n*1000:.3f} ms; {n:.0f} kinds cost {s/k:.1f}x the sample (process start-up included)')
if n == 500:
    met = lambda ok: 'met' if ok else 'MISSED'
    print(f'target 500 kinds in <= 0.3 s wall: {met(s <= 0.3)} ({s:.3f} s)')
    print(f'target 500 kinds in <= 60 MiB: {met(mem <= 60)} ({mem:.1f} MiB, the largest of all runs)')
"
