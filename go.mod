module github.com/autotune-dev/autotune

go 1.26.0

toolchain go1.26.8

require (
	go.etcd.io/bbolt v1.5.0
	golang.org/x/sys v0.49.0
)

require github.com/dave/jennifer v1.7.1
