// Command kstatus reads a JSON array of Kubernetes objects on stdin and prints, for each, kstatus's
// reading of it as a JSON array of {"status", "message"}: status.Compute, the same call Flux and kpt make.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type reading struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	var objects []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&objects); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: stdin is not a JSON array of objects: %v\n", err)
		os.Exit(2)
	}
	readings := make([]reading, 0, len(objects))
	for i, raw := range objects {
		decoder := json.NewDecoder(bytes.NewReader(raw))
		decoder.UseNumber()
		var object map[string]interface{}
		if err := decoder.Decode(&object); err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: object %d is not a JSON object: %v\n", i, err)
			os.Exit(2)
		}
		result, err := status.Compute(&unstructured.Unstructured{Object: integers(object).(map[string]interface{})})
		if err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: object %d: %v\n", i, err)
			os.Exit(1)
		}
		readings = append(readings, reading{Status: string(result.Status), Message: result.Message})
	}
	if err := json.NewEncoder(os.Stdout).Encode(readings); err != nil {
		fmt.Fprintf(os.Stderr, "kstatus: %v\n", err)
		os.Exit(1)
	}
}

// integers turns JSON numbers into int64 where they are whole, float64 elsewhere, as client-go's decoder
// hands objects to kstatus (its accessors read metadata.generation as int64).
func integers(v interface{}) interface{} {
	switch t := v.(type) {
	case map[string]interface{}:
		for k, e := range t {
			t[k] = integers(e)
		}
		return t
	case []interface{}:
		for i, e := range t {
			t[i] = integers(e)
		}
		return t
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	default:
		return v
	}
}
