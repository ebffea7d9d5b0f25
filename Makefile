# Targets for comparisons that need more than Go. The tests need only
# `go test ./...` (see the README).

GO ?= go

# bench-openblas: the GEMM shape, the tuning budget when the shape has no
# tuned config yet, bench's flags (10 samples: the naive loops take seconds a
# call at 1024³), and the tuning database (autotune's default when empty:
# $$AUTOTUNE_DB, else the user cache directory).
OPENBLAS_SHAPE ?= 1024x1024x1024
OPENBLAS_TRIALS ?= 100
OPENBLAS_TIME ?= 5m
OPENBLAS_BENCH_FLAGS ?= --samples 10
DB ?=

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
openblas_bin := ./autotune-openblas
openblas_workload := --op gemm --shape $(OPENBLAS_SHAPE) --device cpu $(if $(DB),--db $(DB))

.PHONY: bench-openblas

# bench-openblas installs OpenBLAS (Debian's libopenblas-dev) if it is missing,
# builds autotune with the openblas tag, tunes GEMM at OPENBLAS_SHAPE unless
# the database has a tuned config for it, and benches the tuned kernel
# against naive Go, gonum, OpenBLAS and the FMA peak.
bench-openblas:
	@if ! command -v dpkg >/dev/null; then \
		echo "no dpkg: install OpenBLAS and its development files yourself"; \
	elif ! dpkg -s libopenblas-dev >/dev/null 2>&1; then \
		echo "installing libopenblas-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libopenblas-dev; \
	fi
	$(GO) build -tags openblas -o $(openblas_bin) ./cmd/autotune
	@$(openblas_bin) best $(openblas_workload) >/dev/null 2>&1 || { \
		echo "$(openblas_bin) tune $(openblas_workload) --trials $(OPENBLAS_TRIALS) --time $(OPENBLAS_TIME)"; \
		$(openblas_bin) tune $(openblas_workload) --trials $(OPENBLAS_TRIALS) --time $(OPENBLAS_TIME); \
	}
	$(openblas_bin) bench $(openblas_workload) $(OPENBLAS_BENCH_FLAGS)
