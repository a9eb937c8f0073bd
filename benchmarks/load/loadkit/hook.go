package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// benchObject is the part of a bench parent the hook reads: which parent it is and what its spec asks for.
type benchObject struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		// Value goes into every child and the status; an update wave changes it.
		Value string `json:"value"`
		// Stamp is the wall clock (Unix nanoseconds, as a string) of the edit that set Value: the hook measures
		// event-to-hook latency as now - Stamp the first time it sees a stamp.
		Stamp string `json:"stamp"`
		// Children is how many ConfigMaps the parent wants.
		Children int `json:"children"`
		// Shared names the shared ConfigMap the parent relates to (loadkit create --related), or is empty: the
		// customize hook asks for it, and its data.value goes into every child and the status as "shared".
		Shared string `json:"shared"`
	} `json:"spec"`
}

// benchInput is the part of a MapController's input ConfigMap the hook reads: which input it is and the value (and
// stamp) its outputs carry.
type benchInput struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Data struct {
		Value string `json:"value"`
		Stamp string `json:"stamp"`
	} `json:"data"`
}

// relatedObject is the part of a related ConfigMap the hook reads.
type relatedObject struct {
	Data map[string]string `json:"data"`
}

// hookRequest covers every kind: a CompositeController sends "parent", a DecoratorController "object", a
// MapController "parent" and "input"; a customize request "parent". Related objects come by type, then by name
// (the keys' spelling differs between hook API versions, so the hook reads the values only).
type hookRequest struct {
	Parent  *benchObject                        `json:"parent"`
	Object  *benchObject                        `json:"object"`
	Input   *benchInput                         `json:"input"`
	Related map[string]map[string]relatedObject `json:"related"`
}

type child struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   childMeta         `json:"metadata"`
	Data       map[string]string `json:"data"`
}

type childMeta struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
}

type benchStatus struct {
	Value string `json:"value"`
	Stamp string `json:"stamp"`
	// Shared is the related ConfigMap's value, for a parent that relates to one ("" until the engine sends it).
	Shared *string `json:"shared,omitempty"`
}

// relatedRule is one entry of a customize answer's relatedResources.
type relatedRule struct {
	APIVersion string   `json:"apiVersion"`
	Resource   string   `json:"resource"`
	Names      []string `json:"names"`
}

type customizeResponse struct {
	RelatedResources []relatedRule `json:"relatedResources"`
}

type syncResponse struct {
	Status   benchStatus `json:"status"`
	Children []child     `json:"children"`
}

type decorateResponse struct {
	Labels      map[string]string `json:"labels"`
	Status      benchStatus       `json:"status"`
	Attachments []child           `json:"attachments"`
}

// mapResponse has no status: a MapController's engine counts the parent's status itself.
type mapResponse struct {
	Outputs []child `json:"outputs"`
}

// payload pads each child's data to the size of a small real ConfigMap (about 300 bytes of data).
var payload = func() string {
	b := make([]byte, 256)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}()

type hookStats struct {
	mu             sync.Mutex
	calls          int64
	customizeCalls int64
	since          time.Time
	recordFrom     int64 // stamps at or after this (Unix ns) count for latency; 0: latency off
	lastStamp      map[string]string
	latencies      []float64 // milliseconds
	seen           map[string]struct{}
	firstCall      time.Time
	lastCall       time.Time
}

func newStats() *hookStats {
	return &hookStats{since: time.Now(), lastStamp: map[string]string{}, seen: map[string]struct{}{}}
}

func (s *hookStats) observe(key string, stamp string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.firstCall.IsZero() {
		s.firstCall = now
	}
	s.lastCall = now
	s.seen[key] = struct{}{}
	if s.recordFrom == 0 || stamp == "" || s.lastStamp[key] == stamp {
		return
	}
	s.lastStamp[key] = stamp
	ns, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil || ns < s.recordFrom {
		return
	}
	s.latencies = append(s.latencies, float64(now.UnixNano()-ns)/1e6)
}

func (s *hookStats) customized() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.customizeCalls++
}

func (s *hookStats) reset(latency bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = 0
	s.customizeCalls = 0
	s.since = time.Now()
	s.recordFrom = 0
	if latency {
		s.recordFrom = s.since.UnixNano()
	}
	s.lastStamp = map[string]string{}
	s.latencies = nil
	s.seen = map[string]struct{}{}
	s.firstCall = time.Time{}
	s.lastCall = time.Time{}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted)) + 0.5)
	if i < 1 {
		i = 1
	}
	if i > len(sorted) {
		i = len(sorted)
	}
	return sorted[i-1]
}

func (s *hookStats) snapshot() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	lat := append([]float64(nil), s.latencies...)
	sort.Float64s(lat)
	out := map[string]any{
		"calls":          s.calls,
		"customizeCalls": s.customizeCalls,
		"parentsSeen":    len(s.seen),
		"cpuSeconds":     cpuSeconds(),
		"latencyMs": map[string]any{
			"count": len(lat),
			"p50":   percentile(lat, 0.50),
			"p90":   percentile(lat, 0.90),
			"p99":   percentile(lat, 0.99),
			"max":   percentile(lat, 1.0),
		},
	}
	if !s.firstCall.IsZero() {
		out["firstCallUnixMs"] = s.firstCall.UnixMilli()
		out["lastCallUnixMs"] = s.lastCall.UnixMilli()
	}
	return out
}

// children are the n ConfigMaps named after the object they are made from (a parent, or a map's input), each
// holding its value, and the related ConfigMap's value as "shared" when shared is not nil.
func children(name string, n int, value string, shared *string) []child {
	if n <= 0 {
		n = 0
	}
	out := make([]child, n)
	for i := range out {
		out[i] = child{
			APIVersion: "v1",
			Kind:       "ConfigMap",
			Metadata: childMeta{
				Name:   name + "-" + strconv.Itoa(i),
				Labels: map[string]string{"bench.metareactor.dev/load": "true"},
			},
			Data: map[string]string{"value": value, "index": strconv.Itoa(i), "payload": payload},
		}
		if shared != nil {
			out[i].Data["shared"] = *shared
		}
	}
	return out
}

// sharedValue is the value of the related ConfigMap a parent relates to, nil for a parent that relates to none,
// and "" while the request does not carry it.
func sharedValue(p *benchObject, related map[string]map[string]relatedObject) *string {
	if p.Spec.Shared == "" {
		return nil
	}
	value := ""
	for _, byName := range related {
		for _, object := range byName {
			value = object.Data["value"]
		}
	}
	return &value
}

func runHook(args []string) error {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	portFile := fs.String("port-file", "", "write the bound port here once listening")
	if err := fs.Parse(args); err != nil {
		return err
	}
	stats := newStats()
	mux := http.NewServeMux()
	// answer decodes a request and encodes what respond makes of it; respond returns nil for a request that lacks
	// what its kind sends.
	answer := func(respond func(req *hookRequest) any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var req hookRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body := respond(&req)
			if body == nil {
				http.Error(w, "the request lacks its parent, object or input", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(body)
		}
	}
	// synced counts a call for parent p and returns its status and children: what /sync and /decorate share.
	synced := func(p *benchObject, related map[string]map[string]relatedObject) (benchStatus, []child) {
		stats.observe(p.Metadata.Namespace+"/"+p.Metadata.Name, p.Spec.Stamp, time.Now())
		shared := sharedValue(p, related)
		return benchStatus{Value: p.Spec.Value, Stamp: p.Spec.Stamp, Shared: shared},
			children(p.Metadata.Name, p.Spec.Children, p.Spec.Value, shared)
	}
	// A parent with spec.shared relates to that ConfigMap of its own namespace; others to nothing.
	mux.HandleFunc("POST /customize", answer(func(req *hookRequest) any {
		if req.Parent == nil {
			return nil
		}
		stats.customized()
		rules := []relatedRule{}
		if req.Parent.Spec.Shared != "" {
			rules = append(rules, relatedRule{APIVersion: "v1", Resource: "configmaps", Names: []string{req.Parent.Spec.Shared}})
		}
		return customizeResponse{RelatedResources: rules}
	}))
	mux.HandleFunc("POST /sync", answer(func(req *hookRequest) any {
		if req.Parent == nil {
			return nil
		}
		status, made := synced(req.Parent, req.Related)
		return syncResponse{Status: status, Children: made}
	}))
	mux.HandleFunc("POST /decorate", answer(func(req *hookRequest) any {
		if req.Object == nil {
			return nil
		}
		status, made := synced(req.Object, req.Related)
		label := map[string]string{"bench.metareactor.dev/value": req.Object.Spec.Value}
		return decorateResponse{Labels: label, Status: status, Attachments: made}
	}))
	// A map call is counted, and its latency timed, per input: the unit a MapController run measures.
	mux.HandleFunc("POST /map", answer(func(req *hookRequest) any {
		p, in := req.Parent, req.Input
		if p == nil || in == nil {
			return nil
		}
		stats.observe(in.Metadata.Namespace+"/"+in.Metadata.Name, in.Data.Stamp, time.Now())
		return mapResponse{Outputs: children(in.Metadata.Name, p.Spec.Children, in.Data.Value, nil)}
	}))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(stats.snapshot())
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		stats.reset(r.URL.Query().Get("latency") == "true")
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		tmp := *portFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(port)), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, *portFile); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "loadkit hook listening on %s\n", ln.Addr())
	return http.Serve(ln, mux)
}
