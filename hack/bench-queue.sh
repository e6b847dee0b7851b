#!/usr/bin/env bash
# The controller work queue, ours (kube-codegen-runtime's WorkQueue<Arc<ObjectKey>>, as a
# Controller keys it) against
# client-go's (the rate-limiting queue controller-runtime gives each controller, keyed by
# reconcile.Request), same operations, same machine, no metrics on either side:
#
#   hack/bench-queue.sh
#
# BENCH_QUEUE_KEYS keys (default 1 000 000): each added twice (the second add deduplicated),
# then each taken and marked done; and, in a fresh queue, the resident set's growth per key
# while keys are made and added one by one, as event handlers add them (Go's settled after
# `runtime.GC` and `debug.FreeOSMemory`). An add hands the queue a key: Rust clones an `Arc`,
# Go copies the struct (its string headers).
#
# Ends with `queue-adds-per-second`, `queue-gets-per-second` and `queue-bytes-per-key`
# lines: ours, Go's and the ratio ours / Go's (over 1 is faster for the rates, more memory
# for the bytes), the medians of BENCH_ROUNDS runs (default 3).
#
# Needs: cargo (under `flock $CARGO_LOCK` when CARGO_LOCK is set); a Go toolchain that builds
# offline in a Kubernetes source tree (BENCH_GO_ENV is sourced; BENCH_K8S_TREE is the tree,
# whose vendored client-go the Go program is built against): what ../shared/tools/real-apiserver
# sets up.
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-3}
GO_ENV=${BENCH_GO_ENV:-/root/.cache/real-apiserver/go-env.sh}
K8S_TREE=${BENCH_K8S_TREE:-/root/.cache/real-apiserver/src/deps/github.com/openshift/kubernetes}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
go_src="$K8S_TREE/_output/kcg-bench-queue-$$"
cleanup() {
  rm -rf "$go_src" "$work"
  rmdir "$K8S_TREE/_output" 2>/dev/null || true
}
trap cleanup EXIT

cargo_locked() {
  if [[ -n "${CARGO_LOCK:-}" ]]; then flock "$CARGO_LOCK" cargo "$@"; else cargo "$@"; fi
}

echo "== building" >&2
(cd "$root" && cargo_locked build --release --quiet -p bench-queue)
ours=target/release/bench-queue
mkdir -p "$go_src/queue"
cp "$root/hack/bench-queue/go/main.go" "$go_src/queue/"
(
  # shellcheck disable=SC1090
  source "$GO_ENV"
  cd "$K8S_TREE"
  go build -o "$work/go-queue" "./_output/kcg-bench-queue-$$/queue"
)

declare -A figures
for round in $(seq "$ROUNDS"); do
  for side in ours go; do
    if [[ "$side" == ours ]]; then out=$("$root/$ours"); else out=$("$work/go-queue"); fi
    echo "round $round, $side: $(echo "$out" | tr '\n' ' ')" >&2
    while read -r name value; do
      figures[$side-$name]+="$value "
    done <<<"$out"
  done
done

median() { python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
for name in adds-per-second gets-per-second bytes-per-key; do
  o=$(median ${figures[ours-$name]})
  g=$(median ${figures[go-$name]})
  printf 'queue-%s: ours %.0f, go %.0f, ratio %s\n' "$name" "$o" "$g" \
    "$(python3 -c "print(round($o / $g, 2))")"
done
