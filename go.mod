module github.com/autotune-dev/autotune

go 1.26.0

toolchain go1.26.8

require (
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/dave/jennifer v1.7.1
	github.com/ebitengine/purego v0.11.3
	github.com/schollz/progressbar/v3 v3.19.1
	golang.org/x/term v0.47.0
	gonum.org/v1/gonum v0.17.0
	gonum.org/v1/netlib v0.0.0-20230729102104-8b8060e7531f
)

require (
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
)
