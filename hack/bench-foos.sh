#!/usr/bin/env bash
# The Foo controller at scale, ours (sample-controller) against Go's sample-controller, on a
# running kube-apiserver with kube-controller-manager.
#
#   KUBECONFIG=/path/to/kubeconfig hack/bench-foos.sh
#
# For each client rate limit, alternating ours and Go's for BENCH_ROUNDS rounds (default 1):
# a fresh namespace; the controller started and its caches synced; N Foos created as fast as
# BENCH_CREATE_PARALLEL (default 8) `kubectl create` processes can; then the time from the end
# of the last create until every Foo has converged, and the controller's peak resident memory
# (VmHWM) at that moment. The controller is stopped and the namespace deleted (bounded wait)
# before the next run. Each run has its own namespace, so nothing is left from the one before.
#
# Converged: the Foo's Deployment exists, owned by a Foo, and the Foo's status was written
# (`status.availableReplicas` set; both controllers write it, 0 while no pod is available).
# hack/bench-foos/converge.py watches Foos and Deployments from before the first create and
# stamps each condition with the client clock when it is first seen.
#
# Foos ask for 0 replicas: the Deployment, its ReplicaSet and the controllers' work are as
# for 1, but kube-controller-manager creates no Pods (10,000 Pending Pods would load the API
# server for both sides alike and measure KCM, not the controller). Both CRDs ship
# `minimum: 1` for replicas, so the CRD installed here (ours, from artifacts/crds; v1alpha1
# stored and served, which is what both controllers read) has it lowered to 0.
#
# Limits (BENCH_QPS):
#   default  client-go's default for both: Go's sample-controller as it ships, whose clients
#            leave the QPS unset, so each typed group-version client (Deployments, Events,
#            Foos) has its own limiter of QPS 5, burst 10; ours with --kube-api-qps 5
#            --kube-api-burst 10 --kube-api-limit-per-group-version, the same division;
#   raised   BENCH_RAISED_QPS / BENCH_RAISED_BURST (default 500 / 1000) for both (Go's from a
#            temporary copy whose main sets rest.Config QPS and Burst from the environment);
#   both     (default) raised at BENCH_FOOS (default 10000), then default at
#            BENCH_FOOS_QPS5 (default 500).
# At QPS 5, 10,000 Foos need at least ~2,000 s per controller (10,000 Deployment creates at
# 5 a second, the status writes and events on their own limiters alongside), and one bucket
# for all (ours without --kube-api-limit-per-group-version) ~6,000 s: over half an hour, or
# over an hour and a half, per side. Run it on its own with
# `BENCH_FOOS=10000 BENCH_QPS=default hack/bench-foos.sh` (BENCH_CONVERGE_TIMEOUT grows with N).
# BENCH_UNLIMITED=1 also runs both without a client limit (ours as kube-rs ships; Go's QPS -1).
#
# Ends with, per limit, `foos-<n>-converge: ours <s>, go <s>, ratio <r>` and
# `foos-<n>-peak-memory: ours <bytes>, go <bytes>, ratio <r>`; the default limits keep those
# names, the raised and unlimited runs add `-raised` / `-unlimited`. With several rounds the
# figures are medians. Then, to tell where the time went, `foos-<n>-controller-cpu` (the
# controller's CPU seconds from the first create until converged) and `foos-<n>-server-cpu`
# (kube-apiserver's, etcd's and kube-controller-manager's, when they run on this machine;
# 0 for a remote cluster).
#
# Ours runs with --namespace (the run's): besides Foos and Deployments it caches Pods and
# Icecreams (its Icecream controller), and other Pods on a shared cluster would count against
# it. Go's has no such flag and caches Foos and Deployments in every namespace, which on the
# benchmark cluster are the run's and the few other Deployments there.
#
# With an explicit QPS (the raised runs) client-go shares one limiter per clientset, and Go's
# sample-controller has two (Kubernetes kinds, Foos); ours has one client and one limiter.
#
# BENCH_SIDES (default `ours go`) runs one side alone (`ours` or `go`) while trying a change;
# the comparison lines then say `n/a` for the side not run.
#
# BENCH_OURS names a sample-controller binary already built (with --kube-api-qps) to use
# instead of building one (BENCH_PROFILE, default release).
#
# Needs: kubectl, python3; cargo (under `flock $CARGO_LOCK` when CARGO_LOCK is set, for the
# build only); a Go toolchain that builds offline in a Kubernetes source tree (BENCH_GO_ENV
# is sourced; BENCH_K8S_TREE is the tree; its go.work has staging/src/k8s.io/sample-controller).
# Installs the Foo and Icecream CRDs if absent and deletes them at the end if it installed them.
set -euo pipefail

: "${KUBECONFIG:?KUBECONFIG must name the cluster to benchmark on}"
export KUBECONFIG
N=${BENCH_FOOS:-10000}
N_QPS5=${BENCH_FOOS_QPS5:-500}
MODE=${BENCH_QPS:-both}
ROUNDS=${BENCH_ROUNDS:-1}
RAISED_QPS=${BENCH_RAISED_QPS:-500}
RAISED_BURST=${BENCH_RAISED_BURST:-1000}
PARALLEL=${BENCH_CREATE_PARALLEL:-8}
SIDES=${BENCH_SIDES:-ours go}
PROFILE=${BENCH_PROFILE:-release}
DELETE_TIMEOUT=${BENCH_DELETE_TIMEOUT:-900}
GO_ENV=${BENCH_GO_ENV:-/root/.cache/real-apiserver/go-env.sh}
K8S_TREE=${BENCH_K8S_TREE:-/root/.cache/real-apiserver/src/deps/github.com/openshift/kubernetes}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
go_src="$K8S_TREE/_output/kcg-bench-foos-$$"
installed_crds=""
ns=""
ctl_pid=""
watcher_pid=""

# cpu_seconds PID...: user + system CPU seconds the processes have used (0 for one gone).
cpu_seconds() {
  local total=0 pid ticks
  for pid in "$@"; do
    # Fields 14 and 15 of /proc/PID/stat, counted after the command name's closing paren.
    ticks=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12 + $13}') || ticks=0
    total=$((total + ${ticks:-0}))
  done
  python3 -c "print(round($total / $(getconf CLK_TCK), 2))"
}
# The control plane's processes when they run on this machine (the loopback cluster of
# ../shared/tools/real-apiserver; process names are cut at 15 characters): their CPU during
# a run is the load each controller puts on the server. On a remote cluster none is found
# and the figure is 0.
server_pids() { pgrep -x 'kube-apiserver|etcd|kube-controller' || true; }

stop_controller() {
  [[ -n "$ctl_pid" ]] || return 0
  kill -TERM "$ctl_pid" 2>/dev/null || true
  for _ in $(seq 30); do kill -0 "$ctl_pid" 2>/dev/null || break; sleep 1; done
  kill -KILL "$ctl_pid" 2>/dev/null || true
  wait "$ctl_pid" 2>/dev/null || true
  ctl_pid=""
}

cleanup() {
  stop_controller
  [[ -z "$watcher_pid" ]] || kill "$watcher_pid" 2>/dev/null || true
  if [[ -n "$ns" ]]; then
    kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  if [[ -n "$installed_crds" ]]; then
    echo "deleting the Foo and Icecream CRDs" >&2
    kubectl delete crd foos.samplecontroller.k8s.io icecreams.samplecontroller.k8s.io \
      --ignore-not-found --wait=false >/dev/null 2>&1 || true
  fi
  rm -rf "$go_src" "$work"
  rmdir "$K8S_TREE/_output" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cargo_locked() {
  if [[ -n "${CARGO_LOCK:-}" ]]; then flock "$CARGO_LOCK" cargo "$@"; else cargo "$@"; fi
}

echo "== building" >&2
if [[ -n "${BENCH_OURS:-}" ]]; then
  ours=$BENCH_OURS
else
  cargo_locked build --quiet --profile "$PROFILE" -p sample-controller --manifest-path "$root/Cargo.toml"
  target_dir=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  dir=$([[ "$PROFILE" == dev ]] && echo debug || echo "$PROFILE")
  ours="$target_dir/$dir/sample-controller"
fi
# Go's sample-controller, from a scratch copy in the tree (removed on exit) whose main sets
# the client rate limit from GO_KUBE_API_QPS / GO_KUBE_API_BURST when they are set.
sample="$K8S_TREE/staging/src/k8s.io/sample-controller"
mkdir -p "$go_src/samplecontroller"
cp "$sample/main.go" "$sample/controller.go" "$go_src/samplecontroller/"
sed -i 's/^\(\s*\)kubeClient, err := kubernetes.NewForConfig(cfg)/\1benchRateLimit(cfg)\n&/' \
  "$go_src/samplecontroller/main.go"
grep -q 'benchRateLimit(cfg)' "$go_src/samplecontroller/main.go" \
  || { echo "Go's main.go changed: no kubernetes.NewForConfig(cfg) to put the limit before" >&2; exit 1; }
cat > "$go_src/samplecontroller/bench_rate_limit.go" <<'GO'
package main

import (
	"os"
	"strconv"

	"k8s.io/client-go/rest"
)

// benchRateLimit sets the clients' rate limit from GO_KUBE_API_QPS and GO_KUBE_API_BURST;
// unset, client-go's default applies (QPS 5, burst 10). A negative QPS means no limit.
func benchRateLimit(cfg *rest.Config) {
	if v, err := strconv.ParseFloat(os.Getenv("GO_KUBE_API_QPS"), 32); err == nil {
		cfg.QPS = float32(v)
	}
	if v, err := strconv.Atoi(os.Getenv("GO_KUBE_API_BURST")); err == nil {
		cfg.Burst = v
	}
}
GO
(
  # shellcheck disable=SC1090
  source "$GO_ENV"
  cd "$K8S_TREE"
  GOWORK="$K8S_TREE/go.work" go build -o "$work/go-sample-controller" "./_output/kcg-bench-foos-$$/samplecontroller"
)
rm -rf "$go_src"
go_prog="$work/go-sample-controller"

if ! kubectl get crd foos.samplecontroller.k8s.io >/dev/null 2>&1; then
  for f in "$root"/sample-controller/artifacts/crds/samplecontroller.k8s.io_*.yaml; do
    sed 's/minimum: 1.0/minimum: 0.0/' "$f"; echo ---
  done > "$work/crds.yaml"
  installed_crds=1
  kubectl apply -f "$work/crds.yaml" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s \
    crd/foos.samplecontroller.k8s.io crd/icecreams.samplecontroller.k8s.io >/dev/null
fi

results="$work/results.jsonl"
run_id=0

# run_one SIDE LIMIT COUNT: one run; appends a JSON line to $results.
run_one() {
  local side=$1 limit=$2 count=$3 ready_line log pid_start args=() env_args=() timeout
  run_id=$((run_id + 1))
  ns="kcg-bench-foos-$$-$run_id"
  log="$work/$side-$limit-$run_id.log"
  case "$limit" in
    default) args=(--kube-api-qps 5 --kube-api-burst 10 --kube-api-limit-per-group-version)
             env_args=() ;;
    raised) args=(--kube-api-qps "$RAISED_QPS" --kube-api-burst "$RAISED_BURST")
            env_args=(GO_KUBE_API_QPS="$RAISED_QPS" GO_KUBE_API_BURST="$RAISED_BURST") ;;
    unlimited) args=(); env_args=(GO_KUBE_API_QPS=-1) ;;
  esac
  # At QPS 5: about two requests per Foo for each controller, plus room.
  timeout=${BENCH_CONVERGE_TIMEOUT:-$([[ "$limit" == default ]] && echo $((count + 600)) || echo 900)}
  echo "== $side, limit $limit, $count Foos, namespace $ns" >&2
  kubectl create namespace "$ns" >/dev/null
  if [[ "$side" == ours ]]; then
    ready_line="caches synced"
    env -u KUBE_API_QPS -u KUBE_API_BURST RUST_LOG=info "$ours" --kubeconfig "$KUBECONFIG" --namespace "$ns" "${args[@]}" >"$log" 2>&1 &
  else
    ready_line="Started workers"
    env "${env_args[@]}" "$go_prog" --kubeconfig "$KUBECONFIG" >"$log" 2>&1 &
  fi
  ctl_pid=$!
  for _ in $(seq 120); do grep -q "$ready_line" "$log" && break; sleep 0.5; done
  grep -q "$ready_line" "$log" || { echo "controller not ready after 60 s: $(tail -3 "$log")" >&2; return 1; }

  python3 -c '
import json, sys
n = int(sys.argv[1])
for i in range(n):
    name = f"foo-{i:05d}"
    print(json.dumps({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                      "metadata": {"name": name},
                      "spec": {"deploymentName": name, "replicas": 0}}))
' "$count" > "$work/foos.jsonl"
  rm -rf "$work/parts"; mkdir "$work/parts"
  split -n "l/$PARALLEL" "$work/foos.jsonl" "$work/parts/part-"
  "$root/hack/bench-foos/converge.py" "$ns" "$count" "$timeout" > "$work/converge.json" &
  watcher_pid=$!
  sleep 2  # the watches' initial (empty) lists
  local t0 t1 pids=() cpu0 server0 server=()
  mapfile -t server < <(server_pids)
  cpu0=$(cpu_seconds "$ctl_pid")
  server0=$(cpu_seconds "${server[@]}")
  t0=$(date +%s.%N)
  for part in "$work"/parts/part-*; do
    kubectl create -n "$ns" -f "$part" >/dev/null 2>>"$work/create.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || echo "a create failed: $(tail -2 "$work/create.err")" >&2; done
  t1=$(date +%s.%N)
  wait "$watcher_pid" || true
  watcher_pid=""
  local hwm cpu server_cpu
  hwm=$(awk '/^VmHWM:/ {print $2 * 1024}' "/proc/$ctl_pid/status" 2>/dev/null || echo 0)
  cpu=$(python3 -c "print(round($(cpu_seconds "$ctl_pid") - $cpu0, 2))")
  server_cpu=$(python3 -c "print(round($(cpu_seconds "${server[@]}") - $server0, 2))")
  stop_controller
  python3 - "$side" "$limit" "$count" "$t0" "$t1" "$hwm" "$work/converge.json" "$cpu" "$server_cpu" >> "$results" <<'PY'
import json, sys
side, limit, count, t0, t1, hwm, path, cpu, server_cpu = sys.argv[1:]
c = json.load(open(path))
t0, t1 = float(t0), float(t1)
r = {"side": side, "limit": limit, "count": int(count), "create_s": round(t1 - t0, 2),
     "converge_s": round(c["last"] - t1, 2) if c["converged"] else None,
     "from_first_create_s": round(c["last"] - t0, 2), "peak_rss": int(float(hwm)),
     "foos_with_status": c["foos_with_status"], "deployments": c["deployments"],
     "controller_cpu_s": float(cpu), "server_cpu_s": float(server_cpu)}
print(json.dumps(r))
print(json.dumps(r), file=sys.stderr)
PY
  # The controller is stopped; the namespace controller and the garbage collector delete
  # Foos, Deployments and ReplicaSets.
  kubectl delete namespace "$ns" --wait=false >/dev/null
  local gone=""
  for _ in $(seq "$DELETE_TIMEOUT"); do
    kubectl get namespace "$ns" >/dev/null 2>&1 || { gone=1; break; }
    sleep 1
  done
  [[ -n "$gone" ]] || { echo "namespace $ns still there after ${DELETE_TIMEOUT}s" >&2; return 1; }
  ns=""
}

run_limit() {
  local limit=$1 count=$2
  for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS, limit $limit" >&2
    for side in $SIDES; do
      case "$side" in
        ours | go) run_one "$side" "$limit" "$count" ;;
        *) echo "BENCH_SIDES lists ours and/or go, not $side" >&2; exit 2 ;;
      esac
    done
  done
}

case "$MODE" in
  both) run_limit raised "$N"; run_limit default "$N_QPS5" ;;
  raised) run_limit raised "$N" ;;
  default) run_limit default "$N" ;;
  *) echo "BENCH_QPS is default, raised or both" >&2; exit 2 ;;
esac
[[ -n "${BENCH_UNLIMITED:-}" ]] && run_limit unlimited "$N"

python3 - "$results" "$RAISED_QPS" "$RAISED_BURST" <<'PY'
import json, statistics, sys

runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("runs, in order:")
for r in runs:
    print("  " + json.dumps(r))

def med(side, limit, count, key):
    xs = [r[key] for r in runs if (r["side"], r["limit"], r["count"]) == (side, limit, count)]
    if not xs or any(x is None for x in xs):
        return None
    return statistics.median(xs)

def line(name, ours, go, fmt):
    if ours is None or go is None:
        print(f"{name}: ours {ours}, go {go}, ratio n/a (a side was not run, or did not converge)")
    elif go == 0:
        # Server CPU on a remote cluster (no local processes to read).
        print(f"{name}: ours {fmt(ours)}, go {fmt(go)}, ratio n/a")
    else:
        print(f"{name}: ours {fmt(ours)}, go {fmt(go)}, ratio {ours / go:.2f}")

suffix = {"default": "", "raised": "-raised", "unlimited": "-unlimited"}
print(f"raised = QPS {sys.argv[2]} burst {sys.argv[3]}; default = QPS 5 burst 10 (client-go's)")
for limit, count in dict.fromkeys((r["limit"], r["count"]) for r in runs):
    s = suffix[limit]
    line(f"foos-{count}-converge{s}", med("ours", limit, count, "converge_s"),
         med("go", limit, count, "converge_s"), lambda x: f"{x:.2f}")
    line(f"foos-{count}-peak-memory{s}", med("ours", limit, count, "peak_rss"),
         med("go", limit, count, "peak_rss"), lambda x: f"{x:.0f}")
    # Where the time went: the controller's own CPU from the first create until converged,
    # and the control plane's (kube-apiserver, etcd, kube-controller-manager) when local.
    line(f"foos-{count}-controller-cpu{s}", med("ours", limit, count, "controller_cpu_s"),
         med("go", limit, count, "controller_cpu_s"), lambda x: f"{x:.2f}")
    line(f"foos-{count}-server-cpu{s}", med("ours", limit, count, "server_cpu_s"),
         med("go", limit, count, "server_cpu_s"), lambda x: f"{x:.2f}")
PY
