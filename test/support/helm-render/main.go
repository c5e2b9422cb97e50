// Command helm-render renders a Helm chart the way Helm's engine (helm.sh/helm/v3/pkg/engine) does,
// for the chart tests: Go's text/template with sprig's TxtFuncMap less env and expandenv, plus
// toYaml, fromYaml, fromYamlArray, toJson, fromJson, fromJsonArray, include, tpl, required and
// lookup (empty, as in `helm template`); missingkey=zero with "<no value>" removed; templates parsed
// deepest path first; files whose name starts with _ only define. Each rendered file is split like
// releaseutil.SplitManifests and every document turned into JSON by sigs.k8s.io/yaml, as Helm's
// kube client reads it. .Files offers Get over the chart's files/ directory (the only files the
// chart reads). Left out: toToml (no TOML library in Debian's gocode), the rest of .Files,
// .Capabilities and subcharts (the chart has none).
//
// usage: helm-render CHART_DIR VALUES_JSON_FILE RELEASE_NAME RELEASE_NAMESPACE
// prints {"manifests":[{"template":..., "object":...}], "crds":[...], "notes":"..."}
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

type values = map[string]interface{}

// chartFiles is Helm's .Files (chart.Files) as far as the chart uses it: Get returns a file's text, "" when absent.
type chartFiles map[string]string

func (f chartFiles) Get(name string) string { return f[name] }

func readChartFiles(chartDir string) (chartFiles, error) {
	files := chartFiles{}
	dir := filepath.Join(chartDir, "files")
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return files, nil
	}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(chartDir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	return files, err
}

// Helm's includes stop at this depth (engine.recursionMaxNums).
const recursionMaxNums = 1000

func includeFunc(t *template.Template, included map[string]int) func(string, interface{}) (string, error) {
	return func(name string, data interface{}) (string, error) {
		if included[name] > recursionMaxNums {
			return "", fmt.Errorf("unable to execute template: rendering template has a nested reference name: %s", name)
		}
		included[name]++
		defer func() { included[name]-- }()
		var buf strings.Builder
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
}

// tplFunc parses text as a template in a clone of t, named after the calling file, like Helm's tpl.
func tplFunc(parent *template.Template, included map[string]int) func(string, values) (string, error) {
	return func(text string, vals values) (string, error) {
		t, err := parent.Clone()
		if err != nil {
			return "", err
		}
		t.Option("missingkey=zero") // Clone forgets the option (golang/go#43022)
		t.Funcs(template.FuncMap{"include": includeFunc(t, included), "tpl": tplFunc(t, included)})
		tmpl, _ := vals["Template"].(values)
		name, ok := tmpl["Name"].(string)
		if !ok {
			return "", fmt.Errorf("cannot retrieve Template.Name from values inside tpl function: %s", text)
		}
		if t, err = t.New(name).Parse(text); err != nil {
			return "", err
		}
		var buf strings.Builder
		if err := t.Execute(&buf, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
}

func funcMap(t *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	included := map[string]int{}
	f["include"] = includeFunc(t, included)
	f["tpl"] = tplFunc(t, included)
	f["required"] = func(warn string, val interface{}) (interface{}, error) {
		if s, ok := val.(string); val == nil || (ok && s == "") {
			return val, fmt.Errorf("%s", warn)
		}
		return val, nil
	}
	f["lookup"] = func(string, string, string, string) (values, error) { return values{}, nil }
	// Helm's converters swallow errors inside a template (an empty string, or an "Error" key).
	f["toYaml"] = func(v interface{}) string {
		data, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(data), "\n")
	}
	f["toJson"] = func(v interface{}) string {
		data, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(data)
	}
	f["fromYaml"] = func(s string) values {
		m := values{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["fromJson"] = func(s string) values {
		m := values{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["fromYamlArray"] = func(s string) []interface{} {
		a := []interface{}{}
		if err := yaml.Unmarshal([]byte(s), &a); err != nil {
			a = []interface{}{err.Error()}
		}
		return a
	}
	f["fromJsonArray"] = func(s string) []interface{} {
		a := []interface{}{}
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			a = []interface{}{err.Error()}
		}
		return a
	}
	return f
}

// coalesce lays the user's values over the chart's, as chartutil.CoalesceValues does: maps merge
// key by key, anything else (lists too) replaces, and null deletes the chart's value.
func coalesce(dst, src values) values {
	for k, v := range src {
		d, dIsMap := dst[k].(values)
		s, sIsMap := v.(values)
		switch {
		case v == nil:
			delete(dst, k)
		case dIsMap && sIsMap:
			dst[k] = coalesce(d, s)
		default:
			dst[k] = v
		}
	}
	return dst
}

// The fields of Chart.yaml that templates read as .Chart.Name, .Chart.AppVersion, ... (chart.Metadata).
type chartMetadata struct {
	APIVersion  string            `json:"apiVersion"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	AppVersion  string            `json:"appVersion,omitempty"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type,omitempty"`
	KubeVersion string            `json:"kubeVersion,omitempty"`
	Home        string            `json:"home,omitempty"`
	Icon        string            `json:"icon,omitempty"`
	Keywords    []string          `json:"keywords,omitempty"`
	Sources     []string          `json:"sources,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Deprecated  bool              `json:"deprecated,omitempty"`
}

var separator = regexp.MustCompile("(?:^|\\s*\n)---\\s*") // releaseutil.SplitManifests

// documents splits a manifest file into its objects as JSON; comment-only documents are dropped.
func documents(text string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, doc := range separator.Split(strings.TrimSpace(text), -1) {
		if doc = strings.TrimSpace(doc); doc == "" {
			continue
		}
		obj, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%w in\n%s", err, doc)
		}
		if string(obj) != "null" {
			out = append(out, obj)
		}
	}
	return out, nil
}

// Helm parses the deepest paths first, and among equal depths in reverse order (engine.sortTemplates).
func sortTemplates(names []string) {
	sort.Slice(names, func(i, j int) bool {
		ci, cj := strings.Count(names[i], "/"), strings.Count(names[j], "/")
		if ci == cj {
			return names[i] > names[j]
		}
		return ci > cj
	})
}

func readYAML(path string, into interface{}) error {
	data, err := os.ReadFile(path)
	if err == nil {
		err = yaml.Unmarshal(data, into)
	}
	return err
}

func render(chartDir, valuesFile, releaseName, releaseNamespace string) (interface{}, error) {
	var chart chartMetadata
	chartValues := values{}
	userValues := values{}
	if err := readYAML(filepath.Join(chartDir, "Chart.yaml"), &chart); err != nil {
		return nil, err
	}
	if err := readYAML(filepath.Join(chartDir, "values.yaml"), &chartValues); err != nil {
		return nil, err
	}
	if err := readYAML(valuesFile, &userValues); err != nil { // JSON is YAML
		return nil, err
	}
	templates := map[string]string{}
	templatesDir := filepath.Join(chartDir, "templates")
	err := filepath.Walk(templatesDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(templatesDir, path)
		templates[chart.Name+"/templates/"+filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(templates))
	for name := range templates {
		names = append(names, name)
	}
	sortTemplates(names)

	t := template.New("gotpl").Option("missingkey=zero")
	t.Funcs(funcMap(t))
	for _, name := range names {
		if _, err := t.New(name).Parse(templates[name]); err != nil {
			return nil, err
		}
	}
	files, err := readChartFiles(chartDir)
	if err != nil {
		return nil, err
	}
	top := values{
		"Files":   files,
		"Values":  coalesce(chartValues, userValues),
		"Chart":   chart,
		"Release": values{"Name": releaseName, "Namespace": releaseNamespace, "IsInstall": true, "IsUpgrade": false, "Revision": 1, "Service": "Helm"},
	}
	type manifest struct {
		Template string          `json:"template"`
		Object   json.RawMessage `json:"object"`
	}
	result := struct {
		Manifests []manifest      `json:"manifests"`
		CRDs      []json.RawMessage `json:"crds"`
		Notes     string          `json:"notes"`
	}{Manifests: []manifest{}, CRDs: []json.RawMessage{}}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasPrefix(filepath.Base(name), "_") {
			continue
		}
		top["Template"] = values{"Name": name, "BasePath": chart.Name + "/templates"}
		var buf strings.Builder
		if err := t.ExecuteTemplate(&buf, name, top); err != nil {
			return nil, err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if strings.HasSuffix(name, "NOTES.txt") {
			result.Notes = text
			continue
		}
		docs, err := documents(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, doc := range docs {
			result.Manifests = append(result.Manifests, manifest{name, doc})
		}
	}
	crds, _ := filepath.Glob(filepath.Join(chartDir, "crds", "*"))
	for _, path := range crds {
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		docs, err := documents(string(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		result.CRDs = append(result.CRDs, docs...)
	}
	return result, nil
}

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: helm-render CHART_DIR VALUES_JSON_FILE RELEASE_NAME RELEASE_NAMESPACE")
		os.Exit(2)
	}
	result, err := render(os.Args[1], os.Args[2], os.Args[3], os.Args[4])
	if err == nil {
		err = json.NewEncoder(os.Stdout).Encode(result)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helm-render:", err)
		os.Exit(1)
	}
}
