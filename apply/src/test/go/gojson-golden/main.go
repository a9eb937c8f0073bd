// Command gojson-golden regenerates apply/src/test/resources/gojson-golden.json, the byte-exact expectations for
// GoJson: for every input document it records what Go's encoding/json writes after decoding the input the way
// Kubernetes does (k8s.io/apimachinery/pkg/util/json: integral literals become int64, other numbers float64).
// For an input that is a number it also records the bodies Metacontroller's dynamic apply sends with it (see
// applyBodies), which WrittenNumbersTest compares with what Metareactor sends.
//
//	go run apply/src/test/go/gojson-golden/main.go < apply/src/test/resources/gojson-inputs.json \
//	  > apply/src/test/resources/gojson-golden.json
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

type golden struct {
	Input    string `json:"input"`
	Go       string `json:"go"`
	GoFmtV   string `json:"goFmtV,omitempty"`
	GoCreate string `json:"goCreate,omitempty"`
	GoUpdate string `json:"goUpdate,omitempty"`
}

// The child a hook asks for, with the number as spec.n, and the child as observed before: created from the same
// object with n 2 and note "a", then given a field by the server and a status. WrittenNumbersTest holds the same
// two texts.
const (
	desiredTemplate  = `{"apiVersion":"ex.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"n":%s,"note":"b"}}`
	observedTemplate = `{"apiVersion":"ex.com/v1","kind":"Thing","metadata":{"annotations":{` +
		`"metacontroller.k8s.io/last-applied-configuration":"{\"apiVersion\":\"ex.com/v1\",\"kind\":\"Thing\",` +
		`\"metadata\":{\"name\":\"t\"},\"spec\":{\"n\":2,\"note\":\"a\"}}"},"name":"t","namespace":"ns",` +
		`"resourceVersion":"7","uid":"u-1"},"spec":{"n":2,"note":"a","port":80},"status":{"ratio":0.5}}`
	lastAppliedKey = "metacontroller.k8s.io/last-applied-configuration"
)

func main() {
	var inputs []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&inputs); err != nil {
		fmt.Fprintln(os.Stderr, "reading inputs:", err)
		os.Exit(2)
	}
	out := make([]golden, 0, len(inputs))
	for _, raw := range inputs {
		value, err := decode(raw)
		if err != nil {
			fmt.Fprintln(os.Stderr, "decoding", string(raw), ":", err)
			os.Exit(2)
		}
		encoded, err := json.Marshal(value)
		if err != nil {
			fmt.Fprintln(os.Stderr, "encoding", string(raw), ":", err)
			os.Exit(2)
		}
		g := golden{Input: string(raw), Go: string(encoded)}
		if f, ok := value.(float64); ok {
			g.GoFmtV = fmt.Sprintf("%v", f)
		}
		switch value.(type) {
		case int64, float64:
			if g.GoCreate, g.GoUpdate, err = applyBodies(raw); err != nil {
				fmt.Fprintln(os.Stderr, "applying", string(raw), ":", err)
				os.Exit(2)
			}
		}
		out = append(out, g)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "writing:", err)
		os.Exit(2)
	}
}

// applyBodies returns what dynamic apply sends for a desired child holding the number: the created object (the
// desired object plus its last-applied annotation), and the update of the observed child (every field the hook
// sets takes its desired value, the server's field and the status stay, the annotation is refreshed), each encoded
// as client-go encodes an unstructured object.
func applyBodies(number []byte) (string, string, error) {
	desired, err := decode([]byte(fmt.Sprintf(desiredTemplate, number)))
	if err != nil {
		return "", "", err
	}
	lastApplied, err := json.Marshal(desired)
	if err != nil {
		return "", "", err
	}
	observed, err := decode([]byte(observedTemplate))
	if err != nil {
		return "", "", err
	}
	for key, value := range desired.(map[string]interface{})["spec"].(map[string]interface{}) {
		observed.(map[string]interface{})["spec"].(map[string]interface{})[key] = value
	}
	annotate(observed, string(lastApplied))
	annotate(desired, string(lastApplied))
	created, err := json.Marshal(desired)
	if err != nil {
		return "", "", err
	}
	updated, err := json.Marshal(observed)
	if err != nil {
		return "", "", err
	}
	return string(created), string(updated), nil
}

func annotate(object interface{}, lastApplied string) {
	metadata := object.(map[string]interface{})["metadata"].(map[string]interface{})
	annotations, ok := metadata["annotations"].(map[string]interface{})
	if !ok {
		annotations = map[string]interface{}{}
		metadata["annotations"] = annotations
	}
	annotations[lastAppliedKey] = lastApplied
}

// decode mirrors k8s.io/apimachinery/pkg/util/json.Unmarshal into interface{}.
func decode(raw []byte) (interface{}, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v interface{}
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return convert(v), nil
}

func convert(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, item := range t {
			t[k] = convert(item)
		}
		return t
	case []interface{}:
		for i, item := range t {
			t[i] = convert(item)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	default:
		return v
	}
}
