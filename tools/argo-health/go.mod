// Argo CD's health-script runner for the tests of deploy/argocd: `main.go` runs each script on gopher-lua, the Lua
// VM Argo CD embeds (v1.1.1, its latest release), as Argo CD's util/lua does
// (test/support/argo-health.ts).
module endpoint-operator.dev/tools/argo-health

go 1.26.0

tool endpoint-operator.dev/tools/argo-health

require github.com/yuin/gopher-lua v1.1.1
