// Command argo-health runs Argo CD resource health scripts the way Argo CD does (util/lua/lua.go,
// VM.runLua and VM.ExecuteHealthLua), on gopher-lua, the Lua VM Argo CD embeds, for the tests of
// deploy/argocd. As for a script from argocd-cm (useOpenLibs false): the standard libraries are
// skipped and only package, base and table are opened (Argo CD's safe `os` is left out: a script
// that needs it fails here, on the safe side); the object is the global `obj`, decoded like Argo's
// decodeValue (maps and arrays become tables, integers numbers); a run is bounded by a 1 s
// context; the value left on the stack must be a table whose `status` is one of Argo CD's health
// codes, else the answer is Unknown "Lua returned an invalid health status".
//
// usage: argo-health < cases.json, where cases.json is [{"script": "...", "object": {...}}, ...];
// prints [{"status": "...", "message": "..."} | {"error": "..."}, ...] in the same order.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	lua "github.com/yuin/gopher-lua"
)

type testCase struct {
	Script string          `json:"script"`
	Object json.RawMessage `json:"object"`
}

type result struct {
	Status  string `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

var healthCodes = map[string]bool{"Unknown": true, "Progressing": true, "Suspended": true, "Healthy": true, "Degraded": true, "Missing": true}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading cases:", err)
		os.Exit(2)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, run(c))
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "writing results:", err)
		os.Exit(2)
	}
}

func run(c testCase) result {
	// Unstructured objects hold int64 for JSON integers and float64 otherwise.
	decoder := json.NewDecoder(bytes.NewReader(c.Object))
	decoder.UseNumber()
	var object interface{}
	if err := decoder.Decode(&object); err != nil {
		return result{Error: "decoding the object: " + err.Error()}
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(pair.f), NRet: 0, Protect: true}, lua.LString(pair.n)); err != nil {
			return result{Error: "opening " + pair.n + ": " + err.Error()}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1*time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decodeValue(l, numbersAsArgoSeesThem(object)))
	if err := l.DoString(c.Script); err != nil {
		return result{Error: err.Error()}
	}
	returned := l.Get(-1)
	table, ok := returned.(*lua.LTable)
	if !ok {
		return result{Error: fmt.Sprintf("expect table output from Lua script, not %s", returned.Type().String())}
	}
	status := lua.LVAsString(table.RawGetString("status"))
	if !healthCodes[status] {
		return result{Status: "Unknown", Message: "Lua returned an invalid health status"}
	}
	return result{Status: status, Message: lua.LVAsString(table.RawGetString("message"))}
}

func numbersAsArgoSeesThem(value interface{}) interface{} {
	switch v := value.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case []interface{}:
		for i := range v {
			v[i] = numbersAsArgoSeesThem(v[i])
		}
		return v
	case map[string]interface{}:
		for k := range v {
			v[k] = numbersAsArgoSeesThem(v[k])
		}
		return v
	}
	return value
}

// decodeValue is Argo CD's (util/lua/lua.go), which follows gopher-json's.
func decodeValue(l *lua.LState, value interface{}) lua.LValue {
	switch converted := value.(type) {
	case bool:
		return lua.LBool(converted)
	case float64:
		return lua.LNumber(converted)
	case string:
		return lua.LString(converted)
	case int64:
		return lua.LNumber(converted)
	case []interface{}:
		arr := l.CreateTable(len(converted), 0)
		for _, item := range converted {
			arr.Append(decodeValue(l, item))
		}
		return arr
	case map[string]interface{}:
		tbl := l.CreateTable(0, len(converted))
		for key, item := range converted {
			tbl.RawSetH(lua.LString(key), decodeValue(l, item))
		}
		return tbl
	case nil:
		return lua.LNil
	}
	return lua.LNil
}
