// Built in GOPATH mode (GO111MODULE=off) from Debian's /usr/share/gocode (see ../helm.ts). This file
// only makes the go command read `github.com/Masterminds/sprig/v3` as the v3 tree Debian installs at
// github.com/Masterminds/sprig: "minimal module compatibility" applies to code with a go.mod.
module helm-render

go 1.19
