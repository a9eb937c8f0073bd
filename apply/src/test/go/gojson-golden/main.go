// Command gojson-golden regenerates apply/src/test/resources/gojson-golden.json, the byte-exact expectations for
// GoJson: for every input document it records what Go's encoding/json writes after decoding the input the way
// Kubernetes does (k8s.io/apimachinery/pkg/util/json: integral literals become int64, other numbers float64).
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
	Input  string `json:"input"`
	Go     string `json:"go"`
	GoFmtV string `json:"goFmtV,omitempty"`
}

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
