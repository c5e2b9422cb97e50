// Command kstatus reads a JSON array of Kubernetes objects on stdin and prints, for each, kstatus's
// reading of it as a JSON array of {"status", "message"}: status.Compute, the same call Flux and kpt make.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "k8s.io/apimachinery/pkg/util/json"
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
		// apimachinery's decoder keeps whole numbers int64, as client-go hands objects to kstatus.
		var object map[string]interface{}
		if err := kjson.Unmarshal(raw, &object); err != nil {
			fmt.Fprintf(os.Stderr, "kstatus: object %d is not a JSON object: %v\n", i, err)
			os.Exit(2)
		}
		result, err := status.Compute(&unstructured.Unstructured{Object: object})
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
