# tierflow — build, run, test and reproduce. Needs only Go (see go.mod).
GO ?= go
BIN := bin
CMDS := simulate reproduce realrun

.PHONY: all build run test fmt-check vet bench fuzz reproduce clean cuda-deps ptx build-cuda cuda-check

all: build

build: $(addprefix $(BIN)/,$(CMDS))

$(BIN)/%: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./cmd/$*

FORCE:

# The main job: per-ordering swaps and bytes for p=32, c=8 (Freebase86m, d=100).
run: $(BIN)/simulate
	./$(BIN)/simulate --p 32 --c 8

test: fmt-check vet
	$(GO) test -count=1 ./...

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Benchmarks (compare runs with benchstat, never as timed asserts).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./orderings ./sim ./realrun/model

# A short fuzzing pass over every fuzz target.
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./orderings -run '^$$' -fuzz '^FuzzReplayValidate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./orderings -run '^$$' -fuzz '^FuzzReadJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./devices -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/graph -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/internal/cli -run '^$$' -fuzz '^FuzzIntList$$' -fuzztime $(FUZZTIME)

reproduce: $(BIN)/reproduce
	./$(BIN)/reproduce --out results

# reproduce-NAME runs one experiment (see `bin/reproduce --help` for names).
reproduce-%: $(BIN)/reproduce
	./$(BIN)/reproduce --out results --experiments $*

# The CUDA engine (-tags cuda). cuda-deps installs Debian's CUDA 11.8
# headers, libcuda1 and NVRTC (root, about two minutes, once); ptx compiles
# the kernels with NVRTC (the PTX is committed; cuda-check verifies it is up
# to date); build-cuda builds bin/realrun with the CUDA engine. The binary
# needs only the NVIDIA driver at run time.
CUDA_ARCH ?= compute_70
KERNELS := $(wildcard realrun/cuda/kernels/*.cu)

cuda-deps:
	./scripts/install-cuda.sh

$(BIN)/nvrtcc: scripts/nvrtcc.c
	@mkdir -p $(BIN)
	gcc -O2 -Wall -o $@ $< -lnvrtc

ptx: $(BIN)/nvrtcc
	@for k in $(KERNELS); do echo "nvrtc $$k"; ./$(BIN)/nvrtcc -arch $(CUDA_ARCH) -o $${k%.cu}.ptx $$k || exit 1; done

build-cuda: cuda-deps
	$(MAKE) ptx
	$(GO) build -tags cuda -o $(BIN)/realrun ./cmd/realrun

# CI's CUDA check (no GPU needed): see scripts/cuda-check.sh.
cuda-check:
	./scripts/cuda-check.sh

clean:
	rm -rf $(BIN)
