#!/usr/bin/env bash
# Leader failover of sample-controller on a running kube-apiserver, warm standby against cold.
#
#   KUBECONFIG=/path/to/kubeconfig hack/bench-failover.sh
#
# For each mode (warm: the default, a standby caches and queues before it leads; cold:
# `--cold-standby`, a standby starts its informers once it leads) and each of BENCH_ROUNDS
# rounds (default 3): a fresh namespace with BENCH_FOOS Foos (default 3000, 0 replicas, so no
# Pods); replica `a` started with `--leader-elect` and waited for until it holds the Lease and
# every Foo has its Deployment; replica `b` started and waited for until `/readyz` answers;
# then `a` is killed with SIGKILL (no release: `b` must wait for the lease to expire), a new
# Foo is created at once, and the time until its Deployment exists is the failover time.
# The lease is client-go's default, 15 s (`b` watches the Lease and takes it 15 s after it
# saw `a`'s last renewal), so the figure is that plus what the new leader needs before it
# reconciles: nothing for a warm standby, a list of every cached kind for a cold one.
#
# Each failover is the lease's part (from SIGKILL until `b` logs that it took the Lease: 13 s
# to 15 s whatever the mode, by where the kill falls between `a`'s renewals every 2 s) and
# the takeover's (from taking the Lease until `b` logs the new Foo's Deployment
# created: what warm standby saves). Prints `failover-warm`, `failover-cold`,
# `takeover-warm`, `takeover-cold` (medians, seconds) and `takeover-cold-over-warm`, and each
# round's figures before them.
#
# BENCH_LOGS names a directory to keep each round's replica logs in.
#
# BENCH_OURS names a sample-controller binary already built; else one is built
# (BENCH_PROFILE, default release). Needs kubectl. Installs the Foo and Icecream CRDs if
# absent and deletes them at the end if it installed them. Every address is loopback: the
# replicas' probes bind 127.0.0.1.
set -euo pipefail

: "${KUBECONFIG:?KUBECONFIG must name the cluster to benchmark on}"
export KUBECONFIG
N=${BENCH_FOOS:-3000}
ROUNDS=${BENCH_ROUNDS:-3}
PROFILE=${BENCH_PROFILE:-release}
WAIT=${BENCH_WAIT:-600}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
ns=""
pids=()
installed_crds=""

cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  if [[ -n "$ns" ]]; then
    kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  if [[ -n "$installed_crds" ]]; then
    kubectl delete crd foos.samplecontroller.k8s.io icecreams.samplecontroller.k8s.io \
      --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -n "${BENCH_OURS:-}" ]]; then
  ours=$BENCH_OURS
else
  echo "== building sample-controller ($PROFILE)" >&2
  (cd "$root" && cargo build --quiet --profile "$PROFILE" -p sample-controller)
  dir=$PROFILE; [[ "$PROFILE" == dev ]] && dir=debug
  ours="$root/target/$dir/sample-controller"
fi

if ! kubectl get crd foos.samplecontroller.k8s.io >/dev/null 2>&1; then
  installed_crds=1
  # Lowered to 0 replicas allowed, as in hack/bench-foos.sh, so no Pods are made.
  for crd in "$root"/sample-controller/artifacts/crds/*.yaml; do
    sed 's/minimum: 1\(\.0\)\?$/minimum: 0/' "$crd" | kubectl apply -f - >/dev/null
  done
  kubectl wait --for condition=Established crd/foos.samplecontroller.k8s.io crd/icecreams.samplecontroller.k8s.io --timeout=60s >/dev/null
fi

foo_probe='{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{"name":"probe"},"spec":{"deploymentName":"probe","replicas":0}}'
if ! echo "$foo_probe" | kubectl -n default create --dry-run=server -f - >/dev/null 2>&1; then
  echo "the installed Foo CRD refuses replicas: 0 (it would make a Pod per Foo); delete the Foo and Icecream CRDs first, and this script installs ones that allow it" >&2
  exit 2
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

foo() { printf '{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{"name":"%s"},"spec":{"deploymentName":"%s","replicas":0}}\n' "$1" "$1"; }

# until SECONDS WHAT COMMAND...: runs COMMAND every 0.1 s until it succeeds; fails naming WHAT.
until_ok() {
  local limit=$1 what=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then echo "timed out: $what" >&2; return 1; fi
    sleep 0.1
  done
}

replica() { # replica IDENTITY PORT [FLAGS...]: starts one, prints its pid
  local identity=$1 port=$2; shift 2
  "$ours" --kubeconfig "$KUBECONFIG" --namespace "$ns" --leader-elect --identity "$identity" \
    --lease-name failover --lease-namespace "$ns" --health-addr "127.0.0.1:$port" "$@" \
    >"$work/$identity.log" 2>&1 &
  echo $!
}

holder_is() { [[ "$(kubectl -n "$ns" get lease failover -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" == "$1" ]]; }
deployments_are() { [[ "$(kubectl -n "$ns" get deployments --no-headers 2>/dev/null | wc -l)" -ge "$1" ]]; }

declare -A results takeovers
for mode in warm cold; do
  flags=()
  [[ "$mode" == cold ]] && flags=(--cold-standby)
  results[$mode]=""
  takeovers[$mode]=""
  for round in $(seq "$ROUNDS"); do
    ns="failover-$$-$mode-$round"
    kubectl create namespace "$ns" >/dev/null
    for i in $(seq "$N"); do foo "foo-$i"; done >"$work/foos.json"
    kubectl -n "$ns" create -f "$work/foos.json" >/dev/null
    port_a=$(free_port); port_b=$(free_port)
    a=$(replica a "$port_a" "${flags[@]}"); pids+=("$a")
    until_ok "$WAIT" "a leads" holder_is a
    until_ok "$WAIT" "a converges $N Foos" deployments_are "$N"
    b=$(replica b "$port_b" "${flags[@]}"); pids+=("$b")
    until_ok "$WAIT" "b answers /readyz" curl -sf "http://127.0.0.1:$port_b/readyz"
    # Let b see a renew a few times, as a standby that has been up a while has.
    sleep 5
    kill -KILL "$a"
    start=$(date +%s.%N)
    foo new | kubectl -n "$ns" create -f - >/dev/null
    until_ok "$WAIT" "b reconciles the new Foo" kubectl -n "$ns" get deployment new
    end=$(date +%s.%N)
    # From b's log (same clock): when it took the lease, and when it created the Deployment.
    read -r acquired created < <(python3 - "$work/b.log" <<'PY'
import re, sys, datetime
text = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1]).read())
def at(pattern):
    for line in text.splitlines():
        if re.search(pattern, line):
            stamp = line.split()[0].rstrip("Z")
            return datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.timezone.utc).timestamp()
    return float("nan")
print(at("acquired the leader lease"), at(r"created deployment .*deployment=\"new\""))
PY
)
    took=$(python3 -c "print(round($end - $start, 2))")
    lease=$(python3 -c "print(round($acquired - $start, 2))")
    work_s=$(python3 -c "print(round($created - $acquired, 3))")
    echo "round $round, $mode standby: failover ${took}s = lease ${lease}s + takeover ${work_s}s" >&2
    if [[ -n "${BENCH_LOGS:-}" ]]; then
      mkdir -p "$BENCH_LOGS"
      cp "$work/a.log" "$BENCH_LOGS/$mode-$round-a.log"
      cp "$work/b.log" "$BENCH_LOGS/$mode-$round-b.log"
    fi
    results[$mode]+="$took "
    takeovers[$mode]+="$work_s "
    kill -TERM "$b"; wait "$b" 2>/dev/null || true
    kubectl delete namespace "$ns" --wait=false >/dev/null
    ns=""
  done
done

median() { python3 -c "import statistics,sys; print(round(statistics.median(map(float, sys.argv[1:])), 3))" "$@"; }
warm=$(median ${results[warm]})
cold=$(median ${results[cold]})
warm_takeover=$(median ${takeovers[warm]})
cold_takeover=$(median ${takeovers[cold]})
echo "failover-warm: ${warm}s (${results[warm]% })"
echo "failover-cold: ${cold}s (${results[cold]% })"
echo "takeover-warm: ${warm_takeover}s (${takeovers[warm]% })"
echo "takeover-cold: ${cold_takeover}s (${takeovers[cold]% })"
echo "takeover-cold-over-warm: $(python3 -c "print(round($cold_takeover / $warm_takeover, 1))")"
