#!/usr/bin/env python3
"""Watches one namespace's Foos and Deployments until every Foo has converged.

    converge.py NAMESPACE COUNT TIMEOUT_S > result.json

A Foo has converged when a Deployment of its `deploymentName` that a Foo owns exists and
the Foo's status has been written (`status.availableReplicas` set: both controllers write
it, 0 while no pod is available). Two `kubectl get -w` streams (list, then watch) report
each object as it changes; the client clock of the first event showing each condition is
kept. Prints one JSON object: whether all COUNT converged, and the clock of the last one.
Started before the Foos are created, so no event is missed; a watch the server ends is
started again; exits as soon as all have converged, or after TIMEOUT_S seconds.
"""
import json
import signal
import subprocess
import sys
import threading
import time

ns, want, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
lock = threading.Lock()
done = threading.Event()
stopping = threading.Event()  # converged, timed out or stopped: watch no more
status_at = {}  # Foo name -> first time its status was seen written
deploy_at = {}  # Deployment name -> first time it was seen owned by a Foo


def converged():
    return len(status_at) >= want and len(deploy_at) >= want


def follow(resource, columns, seen, accept):
    cmd = ["kubectl", "get", resource, "-n", ns, "-w", "--no-headers",
           "-o", "custom-columns=" + columns]
    # kube-apiserver ends a watch after its request timeout (30 to 60 minutes), and
    # `kubectl get -w` then exits: watch again. The new list reports every object again;
    # the first time seen is kept, so only an object never seen before gets the new list's
    # clock (late by the restart, about a second).
    while not stopping.is_set():
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        for line in proc.stdout:
            parts = line.split()
            if len(parts) < 2 or not accept(parts[1]):
                continue
            with lock:
                seen.setdefault(parts[0], time.time())
                if converged():
                    done.set()
        proc.wait()
        if not stopping.is_set():
            print(f"the watch of {resource} ended; watching again", file=sys.stderr)
            time.sleep(1)


procs = []


def stop(signum, frame):
    """Stopped early (the benchmark was interrupted): the kubectl watches go too."""
    stopping.set()
    for p in procs:
        p.kill()
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, stop)
threads = [
    threading.Thread(target=follow, daemon=True, args=(
        "foos.samplecontroller.k8s.io", "N:.metadata.name,S:.status.availableReplicas",
        status_at, lambda s: s != "<none>")),
    threading.Thread(target=follow, daemon=True, args=(
        "deployments.apps", "N:.metadata.name,O:.metadata.ownerReferences[0].kind",
        deploy_at, lambda o: o == "Foo")),
]
for t in threads:
    t.start()
ok = done.wait(timeout)
stopping.set()
for p in procs:
    p.kill()
with lock:
    last = max(list(status_at.values()) + list(deploy_at.values()) or [0.0])
    print(json.dumps({"converged": ok, "last": last, "foos_with_status": len(status_at),
                      "deployments": len(deploy_at)}))
