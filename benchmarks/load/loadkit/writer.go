package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	benchGroup    = "bench.metareactor.dev"
	benchVersion  = "v1"
	benchResource = "loadparents"
	benchLabel    = "bench.metareactor.dev/load"
)

// ParentName is the name of bench parent i; the Java driver uses the same scheme.
func parentName(i int) string { return fmt.Sprintf("p-%05d", i) }

// sharedName is the name of shared ConfigMap k (--related): parent i relates to sharedName(i % related).
func sharedName(k int) string { return fmt.Sprintf("shared-%d", k) }

// inputName is the name of a MapController's input ConfigMap i (--map).
func inputName(i int) string { return fmt.Sprintf("in-%05d", i) }

type api struct {
	server string
	http   *http.Client
}

func newAPI(server, ca, cert, key string) (*api, error) {
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(ca)
	if err != nil {
		return nil, err
	}
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("no certificate in %s", ca)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 256,
	}
	return &api{server: server, http: &http.Client{Transport: transport, Timeout: 60 * time.Second}}, nil
}

// do sends one request and fails on any status outside 2xx (except those in ok).
func (a *api) do(method, path, contentType string, body []byte, ok ...int) error {
	req, err := http.NewRequest(method, a.server+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 == 2 {
		return nil
	}
	for _, code := range ok {
		if resp.StatusCode == code {
			return nil
		}
	}
	return &statusError{method: method, path: path, code: resp.StatusCode, message: bytes.TrimSpace(msg)}
}

// statusError is an answer outside 2xx (and outside the codes the caller accepts).
type statusError struct {
	method, path string
	code         int
	message      []byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.method, e.path, e.code, e.message)
}

func parentsPath(ns string) string {
	return "/apis/" + benchGroup + "/" + benchVersion + "/namespaces/" + ns + "/" + benchResource
}

func configMapsPath(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" }

// units are what create, edit and trickle work on: the bench parents, or with --map the inputs of one parent.
type units struct {
	api       *api
	ns        string
	mapInputs bool
}

// createParent creates bench parent i; with a selector, the parent of a MapController selecting the inputs; with
// a shared ConfigMap's name, a parent relating to it.
func (u units) createParent(i, children int, selector map[string]any, shared string) error {
	spec := map[string]any{"value": "v0", "stamp": stamp(), "children": children}
	if selector != nil {
		spec["selector"] = selector
	}
	if shared != "" {
		spec["shared"] = shared
	}
	body, _ := json.Marshal(map[string]any{
		"apiVersion": benchGroup + "/" + benchVersion,
		"kind":       "LoadParent",
		"metadata": map[string]any{
			"name":   parentName(i),
			"labels": map[string]string{benchLabel: "true"},
		},
		"spec": spec,
	})
	return u.api.do("POST", parentsPath(u.ns), "application/json", body)
}

// createConfigMap creates a bench ConfigMap that is not a child: a map's input or a shared ConfigMap (its label).
func (u units) createConfigMap(name, label string, data map[string]string) error {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":   name,
			"labels": map[string]string{benchLabel: label},
		},
		"data": data,
	})
	return u.api.do("POST", configMapsPath(u.ns), "application/json", body)
}

// createShared creates shared ConfigMap k, which parents relate to through the customize hook.
func (u units) createShared(k int) error {
	return u.createConfigMap(sharedName(k), "shared", map[string]string{"value": "s0"})
}

func (u units) createInput(i int) error {
	return u.createConfigMap(inputName(i), "input", map[string]string{"value": "v0", "stamp": stamp()})
}

// create makes count units: count parents (the related shared ConfigMaps first, when there are any), or one
// parent and count inputs it selects.
func (u units) create(count, children, related, concurrency int) (int64, error) {
	if !u.mapInputs {
		if failed, err := parallel(related, concurrency, u.createShared); err != nil {
			return failed, err
		}
		return parallel(count, concurrency, func(i int) error {
			shared := ""
			if related > 0 {
				shared = sharedName(i % related)
			}
			return u.createParent(i, children, nil, shared)
		})
	}
	// The inputs first: the parent's status then counts all of them from the engine's start.
	failed, err := parallel(count, concurrency, u.createInput)
	if err != nil {
		return failed, err
	}
	selector := map[string]any{"matchLabels": map[string]string{benchLabel: "input"}}
	if err := u.createParent(0, children, selector, ""); err != nil {
		return 1, err
	}
	return 0, nil
}

// edit sets unit i's value, stamped with the time of the edit: a parent's spec, or an input's data.
func (u units) edit(i int, value string) error {
	if u.mapInputs {
		body, _ := json.Marshal(map[string]any{"data": map[string]any{"value": value, "stamp": stamp()}})
		return u.api.do("PATCH", configMapsPath(u.ns)+"/"+inputName(i), "application/merge-patch+json", body)
	}
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"value": value, "stamp": stamp()}})
	return u.api.do("PATCH", parentsPath(u.ns)+"/"+parentName(i), "application/merge-patch+json", body)
}

func stamp() string { return strconv.FormatInt(time.Now().UnixNano(), 10) }

// parallel runs work(i) for i in [0, n) on `workers` goroutines; it returns the first error and how many failed.
func parallel(n, workers int, work func(i int) error) (int64, error) {
	var next, failed atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := work(i); err != nil {
					failed.Add(1)
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return failed.Load(), err
	}
	return 0, nil
}

type result struct {
	Command   string  `json:"command"`
	Count     int     `json:"count"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	Failed    int64   `json:"failed"`
	Error     string  `json:"error,omitempty"`
}

func runWriter(command string, args []string) error {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	server := fs.String("server", "", "API server URL")
	ca := fs.String("ca", "", "CA certificate (PEM)")
	cert := fs.String("cert", "", "client certificate (PEM)")
	key := fs.String("key", "", "client key (PEM)")
	ns := fs.String("namespace", "", "namespace")
	count := fs.Int("count", 0, "objects")
	children := fs.Int("children", 3, "children per parent (create)")
	related := fs.Int("related", 0, "shared ConfigMaps the parents relate to, parent i to shared-(i % related) (create)")
	value := fs.String("value", "v1", "spec.value to set (edit)")
	concurrency := fs.Int("concurrency", 64, "requests in flight")
	rate := fs.Float64("rate", 10, "edits per second (trickle)")
	duration := fs.Duration("duration", 30*time.Second, "how long to trickle")
	mapInputs := fs.Bool("map", false, "create, edit and trickle a MapController's workload: one parent and count inputs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *server == "" || *ns == "" || *count <= 0 {
		return fmt.Errorf("%s needs --server, --namespace and --count", command)
	}
	a, err := newAPI(*server, *ca, *cert, *key)
	if err != nil {
		return err
	}
	u := units{api: a, ns: *ns, mapInputs: *mapInputs}
	start := time.Now()
	var failed int64
	done := *count
	switch command {
	case "create":
		failed, err = u.create(*count, *children, *related, *concurrency)
	case "edit":
		failed, err = parallel(*count, *concurrency, func(i int) error { return u.edit(i, *value) })
	case "trickle":
		done, failed, err = trickle(u, *count, *rate, *duration)
	case "ceiling":
		failed, err = ceiling(a, *ns, *count, *concurrency)
	}
	seconds := time.Since(start).Seconds()
	out := result{Command: command, Count: done, Seconds: seconds, PerSecond: float64(done) / seconds, Failed: failed}
	if err != nil {
		out.Error = err.Error()
	}
	if command == "ceiling" && err == nil {
		// Leave nothing behind for the engine runs that follow. A collection too large to delete within a request's
		// timeout (90,000 ConfigMaps for 30,000 parents) ends in a 504 or the client's own timeout having deleted
		// part of it: the next attempt deletes more. Any other answer is final.
		for attempt := 1; ; attempt++ {
			err = a.do("DELETE", "/api/v1/namespaces/"+*ns+"/configmaps?labelSelector="+benchLabel+"%3Dceiling", "", nil)
			var status *statusError
			refused := errors.As(err, &status) && status.code != http.StatusGatewayTimeout
			if err == nil || refused || attempt == 20 {
				break
			}
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
	return err
}

// trickle edits a random unit `rate` times per second, each edit stamped with its own time.
func trickle(u units, count int, rate float64, duration time.Duration) (int, int64, error) {
	interval := time.Duration(float64(time.Second) / rate)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var first atomic.Value
	edits := 0
	for now := range ticker.C {
		if now.After(deadline) {
			break
		}
		edits++
		i := rand.Intn(count)
		value := "t" + strconv.Itoa(edits)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := u.edit(i, value); err != nil {
				failed.Add(1)
				first.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return edits, failed.Load(), err
	}
	return edits, 0, nil
}

// ceiling creates `count` ConfigMaps shaped like the children the hook asks for, as fast as the API server takes
// them: the raw write rate an engine's converge is compared with.
func ceiling(a *api, ns string, count, concurrency int) (int64, error) {
	return parallel(count, concurrency, func(i int) error {
		name := fmt.Sprintf("ceiling-%05d", i)
		desired := map[string]any{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata": map[string]any{
				"name":   name,
				"labels": map[string]string{benchLabel: "ceiling", "controller-uid": "00000000-0000-0000-0000-000000000000"},
			},
			"data": map[string]string{"value": "v0", "index": strconv.Itoa(i % 3), "payload": payload},
		}
		lastApplied, _ := json.Marshal(desired)
		desired["metadata"].(map[string]any)["annotations"] = map[string]string{
			"metacontroller.k8s.io/last-applied-configuration": string(lastApplied),
		}
		body, _ := json.Marshal(desired)
		return a.do("POST", configMapsPath(ns), "application/json", body)
	})
}
