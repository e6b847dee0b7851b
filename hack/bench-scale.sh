#!/usr/bin/env bash
# Informer memory at scale, ours against client-go, on a running kube-apiserver.
#
#   KUBECONFIG=/path/to/kubeconfig hack/bench-scale.sh
#
# Creates BENCH_PODS Pods (default 10000; 2-3 KB each as stored) in their own namespace,
# then, alternating for BENCH_ROUNDS rounds (default 3), runs one process per informer kind
# and reads its resident memory before the informer starts and after its cache synced:
# ours (the shared informer factory: full Pods, full Pods without managedFields, metadata
# only, metadata only without managedFields, encoded: metadata decoded and the rest kept as
# JSON) and client-go's (shared informer, metadata informer). Ends with one line per
# comparison: `<name>: ours <bytes>, go <bytes>, ratio <r>`.
# The namespace is deleted at the end and on failure.
#
# Memory is compared settled: client-go's after `runtime.GC` and `debug.FreeOSMemory`, ours
# after glibc's `malloc_trim(0)`, each minus the settled figure before the informer started.
# Raw figures (no collection, no trim) are printed too, and so is the live heap: Go's
# `HeapAlloc` after a collection, and the bytes our counting allocator has handed out and
# not got back (and the malloc chunks holding them), which tells live data from allocator
# overhead. Our transformed runs are repeated with MALLOC_ARENA_MAX=1 (one malloc arena
# instead of one per thread of the multi-threaded runtime), and the first round prints where
# our cached bytes go, part by part.
#
# Needs: kubectl; cargo (run under the shared lock when CARGO_LOCK names it: each cargo call
# takes `flock $CARGO_LOCK`, never the whole run); a Go toolchain that builds offline in a
# Kubernetes source tree (BENCH_GO_ENV is sourced first; BENCH_K8S_TREE is the tree, whose
# vendored client-go the Go program is built against).
#
# BENCH_PROFILE (default dev) is the cargo profile of our program: struct layouts and
# allocations, hence memory per object, do not depend on it, and the dev build is warm.
#
# Then the fake API server at 10 000 and 100 000 objects (`cargo bench -p fake-apiserver
# --bench scale`; BENCH_FAKE_SKIP=1 leaves it out) and the Foo controller against Go's
# sample-controller (hack/bench-foos.sh and its BENCH_* variables; BENCH_FOOS_SKIP=1 leaves
# it out).
set -euo pipefail

: "${KUBECONFIG:?KUBECONFIG must name the cluster to benchmark on}"
export KUBECONFIG
N=${BENCH_PODS:-10000}
ROUNDS=${BENCH_ROUNDS:-3}
NS=${BENCH_NAMESPACE:-kcg-bench-scale}
PROFILE=${BENCH_PROFILE:-dev}
GO_ENV=${BENCH_GO_ENV:-/root/.cache/real-apiserver/go-env.sh}
K8S_TREE=${BENCH_K8S_TREE:-/root/.cache/real-apiserver/src/deps/github.com/openshift/kubernetes}
RUN_TIMEOUT=${BENCH_RUN_TIMEOUT:-600}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
go_src="$K8S_TREE/_output/kcg-bench-$$"
created_ns=""

cleanup() {
  rm -rf "$go_src" "$work"
  # The tree's _output, when this script made it and left nothing else there.
  rmdir "$K8S_TREE/_output" 2>/dev/null || true
  if [[ -n "$created_ns" ]]; then
    echo "deleting namespace $NS" >&2
    kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cargo_locked() {
  if [[ -n "${CARGO_LOCK:-}" ]]; then flock "$CARGO_LOCK" cargo "$@"; else cargo "$@"; fi
}

echo "== building" >&2
cargo_locked build --quiet --profile "$PROFILE" -p bench-scale --manifest-path "$root/Cargo.toml"
target_dir=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
dir=$([[ "$PROFILE" == dev ]] && echo debug || echo "$PROFILE")
ours="$target_dir/$dir/bench-scale"
# The Go program builds inside the Kubernetes tree (its module and vendored client-go),
# from a scratch directory removed on exit.
mkdir -p "$go_src/informermemory"
cp "$root/hack/bench-scale/go/informer-memory/main.go" "$go_src/informermemory/"
(
  # shellcheck disable=SC1090
  source "$GO_ENV"
  cd "$K8S_TREE"
  go build -o "$work/go-informer-memory" "./_output/kcg-bench-$$/informermemory"
)
rm -rf "$go_src"
go_prog="$work/go-informer-memory"

echo "== $N Pods in namespace $NS" >&2
if kubectl get namespace "$NS" >/dev/null 2>&1; then
  echo "namespace $NS exists already; delete it or set BENCH_NAMESPACE" >&2
  exit 1
fi
kubectl create namespace "$NS" >/dev/null
created_ns=1
# Pods wait for the namespace's default service account (the controller-manager makes it).
for _ in $(seq 60); do
  kubectl -n "$NS" get serviceaccount default >/dev/null 2>&1 && break
  sleep 1
done
"$ours" create-pods --namespace "$NS" --count "$N" --concurrency "${BENCH_CREATE_CONCURRENCY:-8}" \
  --timeout-s "${BENCH_CREATE_TIMEOUT:-1800}"
have=$(kubectl -n "$NS" get pods -o name --chunk-size=1000 | wc -l)
echo "pods in $NS: $have" >&2
kubectl get --raw "/api/v1/namespaces/$NS/pods?limit=1" | jq '.items[0]' > "$work/sample.json"
with=$(jq -c . "$work/sample.json" | wc -c)
without=$(jq -c 'del(.metadata.managedFields)' "$work/sample.json" | wc -c)
meta=$(jq -c '{metadata: .metadata}' "$work/sample.json" | wc -c)
echo "one Pod as stored: $with bytes of JSON ($without without managedFields; metadata $meta)"
"$ours" sizes

results="$work/results.jsonl"
run() {
  local out
  if out=$(timeout "$RUN_TIMEOUT" "$@" 2>"$work/stderr"); then
    echo "$out" | tee -a "$results"
  else
    echo "run failed: $* ($(tail -3 "$work/stderr"))" >&2
  fi
}
for round in $(seq "$ROUNDS"); do
  echo "== round $round of $ROUNDS" >&2
  parts=()
  [[ "$round" == 1 ]] && parts=(--breakdown)
  run "$ours" informer-memory --namespace "$NS" --mode full "${parts[@]}"
  run "$go_prog" -namespace "$NS" -mode full
  run "$ours" informer-memory --namespace "$NS" --mode transformed "${parts[@]}"
  run "$ours" informer-memory --namespace "$NS" --mode metadata "${parts[@]}"
  run "$go_prog" -namespace "$NS" -mode metadata
  run "$ours" informer-memory --namespace "$NS" --mode metadata-transformed "${parts[@]}"
  run "$ours" informer-memory --namespace "$NS" --mode encoded "${parts[@]}"
  run env MALLOC_ARENA_MAX=1 "$ours" informer-memory --namespace "$NS" --mode transformed
  run env MALLOC_ARENA_MAX=1 "$ours" informer-memory --namespace "$NS" --mode metadata-transformed
done

python3 - "$results" "$have" <<'PY'
import json, statistics, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
want = int(sys.argv[2])

def per_pod(r, after, before="rss_before"):
    return (r[after] - r[before]) / max(r["objects"], 1)

def figures(program, mode, after, before="rss_before", arenas=None):
    return [per_pod(r, after, before) for r in runs
            if r["program"] == program and r["mode"] == mode and r["objects"] == want
            and r.get("arenas") == arenas]

def med(program, mode, after, before="rss_before", arenas=None):
    xs = figures(program, mode, after, before, arenas)
    return statistics.median(xs) if xs else float("nan")

# Settled: Go after GC + FreeOSMemory, ours after malloc_trim(0).
SETTLED = {"ours": "rss_after_trim", "go": "rss_after_gc"}
print("bytes per cached Pod, in run order (after sync minus before, / Pods):")
for program, mode in [("ours", "full"), ("go", "full"), ("ours", "transformed"),
                      ("ours", "metadata"), ("go", "metadata"),
                      ("ours", "metadatatransformed"), ("ours", "encoded")]:
    raw = [round(x) for x in figures(program, mode, "rss_after")]
    settled = [round(x) for x in figures(program, mode, SETTLED[program])]
    heap = [round(x) for x in figures(program, mode, "heap_after", "heap_before")]
    line = f"  {program} {mode}: RSS raw {raw}, settled {settled}; live heap {heap}"
    if program == "ours":
        chunks = [round(x) for x in figures(program, mode, "chunks_after", "chunks_before")]
        line += f"; malloc chunks {chunks}"
    print(line)
for mode in ["transformed", "metadatatransformed"]:
    settled = [round(x) for x in figures("ours", mode, "rss_after_trim", arenas="1")]
    print(f"  ours {mode}, MALLOC_ARENA_MAX=1: RSS settled {settled}")
for r in runs:
    if r["mode"] == "encoded" and r.get("decoded"):
        print(f"  ours encoded: {r['encoded_bytes'] / r['decoded']:.0f} bytes of JSON a Pod; "
              f"decoding all {r['decoded']} took {r['decode_seconds']:.2f} s "
              f"({r['decode_seconds'] / r['decoded'] * 1e6:.1f} us a Pod, "
              f"{'optimized' if r.get('optimized') else 'unoptimized'} build)")
print("sync seconds: " + ", ".join(
    f"{r['program']} {r['mode']}{' (1 arena)' if r.get('arenas') else ''} {r['sync_seconds']:.2f}"
    for r in runs))

for r in runs:
    if r.get("breakdown"):
        print(f"where ours {r['mode']} keeps its bytes, per Pod (requested, malloc chunks, allocations):")
        for part, requested, chunks, allocations in r["breakdown"]:
            print(f"  {part}: {requested:.0f}, {chunks:.0f}, {allocations}")
        index = r.get("namespace_index")
        if index:
            print(f"  (a namespace lister's index, once built: {index['requested']}, {index['chunks']})")

def line(name, ours, go):
    print(f"{name}: ours {ours:.0f}, go {go:.0f}, ratio {ours / go:.2f}")

line("informer-bytes-per-pod", med("ours", "full", "rss_after_trim"), med("go", "full", "rss_after_gc"))
line("informer-bytes-per-pod-transformed", med("ours", "transformed", "rss_after_trim"),
     med("go", "full", "rss_after_gc"))
line("informer-bytes-per-pod-transformed-one-arena",
     med("ours", "transformed", "rss_after_trim", arenas="1"), med("go", "full", "rss_after_gc"))
line("informer-bytes-per-pod-encoded", med("ours", "encoded", "rss_after_trim"),
     med("go", "full", "rss_after_gc"))
line("informer-bytes-per-pod-metadata", med("ours", "metadata", "rss_after_trim"),
     med("go", "metadata", "rss_after_gc"))
line("informer-bytes-per-pod-metadata-transformed",
     med("ours", "metadatatransformed", "rss_after_trim"), med("go", "metadata", "rss_after_gc"))
line("informer-bytes-per-pod-metadata-transformed-one-arena",
     med("ours", "metadatatransformed", "rss_after_trim", arenas="1"),
     med("go", "metadata", "rss_after_gc"))
line("informer-live-heap-per-pod", med("ours", "full", "heap_after", "heap_before"),
     med("go", "full", "heap_after", "heap_before"))
line("informer-live-heap-per-pod-metadata", med("ours", "metadata", "heap_after", "heap_before"),
     med("go", "metadata", "heap_after", "heap_before"))
PY

# The fake API server as it fills (10 000 and 100 000 objects: memory per object and the
# latency of a get, a list page and a watch event stay flat); BENCH_FAKE_SKIP=1 leaves it out.
if [[ -z "${BENCH_FAKE_SKIP:-}" ]]; then
  cargo_locked bench --manifest-path "$root/Cargo.toml" -p fake-apiserver --bench scale
fi

# The Foo controller against Go's sample-controller (hack/bench-foos.sh, which reads its own
# BENCH_* variables); BENCH_FOOS_SKIP=1 leaves it out. The Pods go first, so they do not load
# the API server under the controllers.
if [[ -z "${BENCH_FOOS_SKIP:-}" ]]; then
  kubectl delete namespace "$NS" --timeout=900s >/dev/null && created_ns=""
  "$root/hack/bench-foos.sh"
fi
