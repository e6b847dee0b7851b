// Command informer-memory is the client-go side of hack/bench-scale.sh: it syncs one shared
// informer of the Pods of a namespace (full objects, or metadata only) and prints its
// resident memory before the informer started and after its cache synced, as one JSON line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// rss is the resident set size of this process in bytes (VmRSS).
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// settled is the RSS after a full collection that returns freed memory to the OS: Go's
// best case, without the garbage a running process carries between collections.
func settled() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return rss()
}

// liveHeap is the bytes of live objects on Go's heap after a full collection (HeapAlloc):
// what the process holds apart from the collector's and the allocator's overhead.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig path")
	namespace := flag.String("namespace", "default", "namespace whose Pods are cached")
	mode := flag.String("mode", "full", "full or metadata")
	settle := flag.Duration("settle", 2*time.Second, "wait after sync before measuring")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up when the cache has not synced by then")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var informer cache.SharedIndexInformer
	var start func(<-chan struct{})
	var before, heapBefore int64
	switch *mode {
	case "full":
		cs := kubernetes.NewForConfigOrDie(cfg)
		// One small request first, so the connection and the client's own state are in
		// the baseline.
		if _, err := cs.CoreV1().Pods(*namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		before = settled()
		heapBefore = liveHeap()
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(*namespace))
		informer = f.Core().V1().Pods().Informer()
		start = f.Start
	case "metadata":
		mc := metadata.NewForConfigOrDie(cfg)
		pods := corev1.SchemeGroupVersion.WithResource("pods")
		if _, err := mc.Resource(pods).Namespace(*namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		before = settled()
		heapBefore = liveHeap()
		f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, *namespace, nil)
		informer = f.ForResource(pods).Informer()
		start = f.Start
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", *mode)
		os.Exit(2)
	}
	began := time.Now()
	start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		os.Exit(1)
	}
	syncSeconds := time.Since(began).Seconds()
	time.Sleep(*settle)
	after := rss()
	afterGC := settled()
	heapAfter := liveHeap()
	out, _ := json.Marshal(map[string]any{
		"program":      "go",
		"mode":         *mode,
		"objects":      len(informer.GetStore().ListKeys()),
		"rss_before":   before,
		"rss_after":    after,
		"rss_after_gc": afterGC,
		"heap_before":  heapBefore,
		"heap_after":   heapAfter,
		"sync_seconds": syncSeconds,
	})
	fmt.Println(string(out))
	runtime.KeepAlive(informer)
}
