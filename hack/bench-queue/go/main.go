// The Go side of hack/bench-queue.sh: client-go's work queue (the rate-limiting queue
// controller-runtime gives each controller, keyed by reconcile.Request's namespace and name)
// under the operations the Rust side runs on kube-codegen-runtime's WorkQueue. Prints
// `adds-per-second`, `gets-per-second` and `bytes-per-key` lines.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// request is controller-runtime's reconcile.Request: a namespace and a name.
type request struct {
	Namespace string
	Name      string
}

func key(i int) request {
	return request{Namespace: fmt.Sprintf("namespace-%03d", i%100), Name: fmt.Sprintf("object-%07d", i)}
}

func newQueue() workqueue.TypedRateLimitingInterface[request] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[request](),
		workqueue.TypedRateLimitingQueueConfig[request]{Name: "bench"},
	)
}

// rss is the resident set in bytes, after a collection that returns freed memory.
func rss() uint64 {
	runtime.GC()
	debug.FreeOSMemory()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, err := strconv.ParseUint(strings.Fields(line)[1], 10, 64)
			if err != nil {
				panic(err)
			}
			return kb * 1024
		}
	}
	panic("no VmRSS")
}

func main() {
	n := 1000000
	if s := os.Getenv("BENCH_QUEUE_KEYS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			panic(err)
		}
	}
	// Memory: keys made and added one by one, as handlers add them; what stays is the
	// queue's.
	q := newQueue()
	before := rss()
	for i := 0; i < n; i++ {
		q.Add(key(i))
	}
	after := rss()
	fmt.Printf("bytes-per-key %.1f\n", float64(after-before)/float64(n))
	q.ShutDown()

	// Throughput: the keys made first; each added twice (the second add is deduplicated),
	// then each taken and done.
	keys := make([]request, n)
	for i := range keys {
		keys[i] = key(i)
	}
	q = newQueue()
	start := time.Now()
	for round := 0; round < 2; round++ {
		for _, k := range keys {
			q.Add(k)
		}
	}
	adds := time.Since(start)
	if q.Len() != n {
		panic(fmt.Sprintf("%d queued, not %d", q.Len(), n))
	}
	start = time.Now()
	for i := 0; i < n; i++ {
		k, _ := q.Get()
		q.Done(k)
		q.Forget(k)
	}
	gets := time.Since(start)
	fmt.Printf("adds-per-second %.0f\n", float64(2*n)/adds.Seconds())
	fmt.Printf("gets-per-second %.0f\n", float64(n)/gets.Seconds())
	q.ShutDown()
}
