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

.PHONY: bench-openblas bench-anchors disturbance evidence-overhead tune-vs-bench

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

# bench-anchors: the table of issue 17, every tuned kernel against oneDNN,
# OpenBLAS and libxsmm. The workloads of each op (override them to run a
# subset: ANCHORS_GEMM="64x64x64 256x256x256"); the tuning budget of a
# workload the database has no tuned config for; bench's flags; the
# directory of bench's JSON, one file per workload.
ANCHORS_GEMM ?= 32x32x32 64x64x64 128x128x128 256x256x256 1024x1024x1024 2048x2048x2048 \
	4096x64x4096 64x4096x4096 1x4096x4096 \
	128x768x768 128x3072x768 128x768x3072 512x768x768 512x3072x768 512x768x3072
ANCHORS_SOFTMAX ?= 4096x1024 12288x128 1024x32000
ANCHORS_ATTENTION ?= 1x8x1024x64 1x12x512x64
ANCHORS_TRIALS ?= 40
ANCHORS_TIME ?= 2m
ANCHORS_BENCH_FLAGS ?= --samples 10
ANCHORS_OUT ?= anchors-out
# ANCHORS_ISA=avx2 compares at AVX2 on an AVX-512 machine: best and tune run
# with GODEBUG=cpu.avx512f=off (so they look up and tune AVX2 configs), and
# bench with --isa avx2, which limits the Go kernels, oneDNN, OpenBLAS and
# libxsmm alike. avx512 makes bench refuse a CPU without it; empty (the
# default) is the CPU's own level.
ANCHORS_ISA ?=
anchors_env := $(if $(filter avx2,$(ANCHORS_ISA)),GODEBUG=cpu.avx512f=off)
anchors_isa := $(if $(ANCHORS_ISA),--isa $(ANCHORS_ISA))
ANCHORS_PACKAGES := libopenblas-dev libdnnl-dev libxsmm-dev
anchors_bin := ./autotune-anchors

# bench-anchors installs what it needs (Debian's $(ANCHORS_PACKAGES)), builds
# autotune with the openblas, onednn and libxsmm tags, tunes each workload
# unless the database has a tuned config for it (ANCHORS_TRIALS trials or
# ANCHORS_TIME), benches it with OPENBLAS_CORETYPE unset (it can force
# OpenBLAS onto slower kernels; --isa avx2 sets it to Haswell on purpose),
# at ANCHORS_ISA when set, and prints the table: tuned, every
# baseline, the ratio to the best one, and the fraction of the FMA peak
# or the multiple of the copy floor.
bench-anchors:
	@missing=""; for p in $(ANCHORS_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get >/dev/null; then echo "no apt-get: install$$missing yourself"; exit 1; fi; \
		echo "installing$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; \
	fi
	$(GO) build -tags openblas,onednn,libxsmm -o $(anchors_bin) ./cmd/autotune
	@mkdir -p $(ANCHORS_OUT)
	@if [ -n "$$OPENBLAS_CORETYPE" ]; then echo "OPENBLAS_CORETYPE=$$OPENBLAS_CORETYPE is unset for the benches"; fi
	@set -e; files=""; \
	one() { \
		name=$$1; shift; w="$$* --device cpu $(if $(DB),--db $(DB))"; \
		env $(anchors_env) $(anchors_bin) best $$w >/dev/null 2>&1 || { \
			echo "$(anchors_env) $(anchors_bin) tune $$w --trials $(ANCHORS_TRIALS) --time $(ANCHORS_TIME)"; \
			env $(anchors_env) $(anchors_bin) tune $$w --trials $(ANCHORS_TRIALS) --time $(ANCHORS_TIME) >/dev/null; \
		}; \
		echo "$(anchors_bin) bench $$w $(anchors_isa) $(ANCHORS_BENCH_FLAGS)"; \
		env -u OPENBLAS_CORETYPE $(anchors_env) $(anchors_bin) bench $$w $(anchors_isa) $(ANCHORS_BENCH_FLAGS) --json >$(ANCHORS_OUT)/$$name.json; \
		files="$$files $(ANCHORS_OUT)/$$name.json"; \
	}; \
	for s in $(ANCHORS_GEMM); do one gemm-$$s --op gemm --shape $$s; done; \
	for s in $(ANCHORS_SOFTMAX); do one softmax-$$s --op softmax --shape $$s; done; \
	for s in $(ANCHORS_ATTENTION); do \
		one attention-$$s --op attention --shape $$s; \
		one attention-causal-$$s --op attention --causal --shape $$s; \
	done; \
	echo; $(GO) run tools/anchors.go $$files

# disturbance: issue 26's experiment (docs/measuring.md). Tunes GEMM at
# DISTURB_SHAPE into two fresh databases, on the machine as it is and with
# one core kept busy by another process (yes), prints what doctor says
# before each and each run's contention line, then benches both winners on
# the machine as it is. Run it on an otherwise quiet machine.
DISTURB_SHAPE ?= 1024x1024x1024
DISTURB_TRIALS ?= 100
DISTURB_TIME ?= 5m
DISTURB_OUT ?= disturbance-out
disturb_bin := ./autotune-disturb
disturb_tune := tune --op gemm --shape $(DISTURB_SHAPE) --device cpu --trials $(DISTURB_TRIALS) --time $(DISTURB_TIME)

disturbance:
	$(GO) build -o $(disturb_bin) ./cmd/autotune
	rm -rf $(DISTURB_OUT) && mkdir -p $(DISTURB_OUT)
	$(disturb_bin) doctor
	$(disturb_bin) $(disturb_tune) --db $(DISTURB_OUT)/quiet.db | tee $(DISTURB_OUT)/quiet.txt
	@sh -c 'yes >/dev/null & busy=$$!; trap "kill $$busy" EXIT INT TERM; \
		$(disturb_bin) doctor; \
		$(disturb_bin) $(disturb_tune) --db $(DISTURB_OUT)/busy.db | tee $(DISTURB_OUT)/busy.txt'
	$(disturb_bin) bench --op gemm --shape $(DISTURB_SHAPE) --device cpu --samples 10 --db $(DISTURB_OUT)/quiet.db
	$(disturb_bin) bench --op gemm --shape $(DISTURB_SHAPE) --device cpu --samples 10 --db $(DISTURB_OUT)/busy.db
	@grep -h contention $(DISTURB_OUT)/quiet.txt $(DISTURB_OUT)/busy.txt

# evidence-overhead: what the evidence of contention costs tuning's
# throughput (issue 26: under 2%). OVERHEAD_REPEATS tunes of OVERHEAD_OP at
# OVERHEAD_SHAPE with the evidence on and as many with it off
# (AUTOTUNE_NO_EVIDENCE=1), interleaved, each into a fresh database, then
# the ratio of the medians (tools/overhead.go). Run it on a quiet machine.
OVERHEAD_OP ?= softmax
OVERHEAD_SHAPE ?= 256x256
OVERHEAD_TRIALS ?= 64
OVERHEAD_REPEATS ?= 5
measure_bin := ./autotune-measure

evidence-overhead:
	$(GO) build -o $(measure_bin) ./cmd/autotune
	$(GO) run tools/overhead.go -bin $(measure_bin) -op $(OVERHEAD_OP) -shape $(OVERHEAD_SHAPE) \
		-trials $(OVERHEAD_TRIALS) -repeats $(OVERHEAD_REPEATS)

# tune-vs-bench: tune and bench agree (issue 26: medians within 15% on a
# quiet machine). Each of TUNEBENCH_WORKLOADS (op:shape) is tuned briefly
# into a fresh database, its winner benched, and both medians printed with
# their ratio (tools/tunebench.go). Run it on a quiet machine.
TUNEBENCH_WORKLOADS ?= gemm:256x256x256 gemm:1024x1024x1024 softmax:4096x1024 attention:1x8x1024x64
TUNEBENCH_TRIALS ?= 40
TUNEBENCH_TIME ?= 2m
TUNEBENCH_SAMPLES ?= 10

tune-vs-bench:
	$(GO) build -o $(measure_bin) ./cmd/autotune
	$(GO) run tools/tunebench.go -bin $(measure_bin) -trials $(TUNEBENCH_TRIALS) -time $(TUNEBENCH_TIME) \
		-samples $(TUNEBENCH_SAMPLES) $(TUNEBENCH_WORKLOADS)
