// Command flux-health reads {"checks": [healthCheckExprs entries], "objects": [...]} as JSON on stdin and prints,
// for each object, the status Flux's StatusEvaluator (github.com/fluxcd/pkg/runtime/cel) gives it, as a JSON array
// of {"status"}: the check is the entry of the object's apiVersion group and kind.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/runtime/cel"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "k8s.io/apimachinery/pkg/util/json"
)

type input struct {
	Checks  []kustomize.CustomHealthCheck `json:"checks"`
	Objects []json.RawMessage             `json:"objects"`
}

type reading struct {
	Status string `json:"status"`
}

func group(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

func fail(code int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "flux-health: "+format+"\n", args...)
	os.Exit(code)
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail(2, "stdin is not {checks, objects}: %v", err)
	}
	evaluators := map[string]*cel.StatusEvaluator{}
	readings := make([]reading, 0, len(in.Objects))
	for i, raw := range in.Objects {
		// apimachinery's decoder keeps whole numbers int64, as client-go hands objects to Flux.
		var content map[string]interface{}
		if err := kjson.Unmarshal(raw, &content); err != nil {
			fail(2, "object %d is not a JSON object: %v", i, err)
		}
		object := &unstructured.Unstructured{Object: content}
		key := group(object.GetAPIVersion()) + "/" + object.GetKind()
		evaluator, ok := evaluators[key]
		if !ok {
			var check *kustomize.CustomHealthCheck
			for j := range in.Checks {
				if group(in.Checks[j].APIVersion) == group(object.GetAPIVersion()) && in.Checks[j].Kind == object.GetKind() {
					check = &in.Checks[j]
				}
			}
			if check == nil {
				fail(1, "object %d: no healthCheckExprs entry for %s", i, key)
			}
			var err error
			if evaluator, err = cel.NewStatusEvaluator(&check.HealthCheckExpressions); err != nil {
				fail(1, "%s: %v", key, err)
			}
			evaluators[key] = evaluator
		}
		result, err := evaluator.Evaluate(context.Background(), object)
		if err != nil {
			fail(1, "object %d (%s): %v", i, key, err)
		}
		readings = append(readings, reading{Status: string(result.Status)})
	}
	if err := json.NewEncoder(os.Stdout).Encode(readings); err != nil {
		fail(1, "%v", err)
	}
}
