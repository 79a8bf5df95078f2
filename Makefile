# tierflow — build, run, test and reproduce. Needs only Go (see go.mod).
GO ?= go
BIN := bin
CMDS := simulate reproduce realrun

.PHONY: all build run test fmt-check vet tidy-check bench bench-kernels generate fuzz reproduce clean cuda-deps ptx build-cuda cuda-check

all: build

build: $(addprefix $(BIN)/,$(CMDS))

$(BIN)/%: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./cmd/$*

FORCE:

# The main job: per-ordering swaps and bytes for p=32, c=8 (Freebase86m, d=100).
run: $(BIN)/simulate
	./$(BIN)/simulate --p 32 --c 8

# realrun/cuda's tests also run the CUDA C kernels (realrun/cuda/kernels/*.cu)
# on the CPU, compiled with $CXX or g++/c++/clang++ when one is installed;
# without one they use the Go transcription and say so (SKIP).
#
# The several-trainer tests move their data through a real S3-compatible
# server: versitygw, installed once into bin/tools/ by s3-server
# (scripts/install-versitygw.sh, pinned; about 3 minutes the first time).
# TIERFLOW_S3_REQUIRED makes a missing server a failure, not a skip.
#
# realrun/gnn/split partitions GNN batches with METIS's gpmetis program
# (Debian's metis package, installed by metis-deps as hdf5-deps installs
# its packages); TIERFLOW_METIS_REQUIRED makes its absence a failure too.
test: fmt-check vet tidy-check s3-server metis-deps
	TIERFLOW_S3_REQUIRED=1 TIERFLOW_METIS_REQUIRED=1 $(GO) test -count=1 ./...

.PHONY: s3-server
s3-server:
	@./scripts/install-versitygw.sh

.PHONY: metis-deps
metis-deps:
	@command -v gpmetis >/dev/null || ./scripts/apt-install.sh metis-deps metis

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# go.mod and go.sum must be what `go mod tidy` makes of them.
tidy-check:
	@$(GO) mod tidy -diff >/dev/null 2>&1 || { echo "go.mod/go.sum are not tidy: run go mod tidy"; $(GO) mod tidy -diff; exit 1; }

# Benchmarks (compare runs with benchstat, never as timed asserts).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./orderings ./sim ./realrun/model

# The SIMD kernels against the portable Go ones (the kernels before the SIMD
# work, still what TIERFLOW_NOSIMD=1 runs): FMA peak, micro-kernel, the GEMMs
# at the chunk shapes, ChunkGrad and RankCounts per level, then benchstat of
# each SIMD level against generic. Output in $(BENCHDIR).
BENCHSTAT := $(GO) run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
BENCHDIR ?= /tmp/tierflow-bench
BENCHCOUNT ?= 6
bench-kernels:
	@mkdir -p $(BENCHDIR)
	$(GO) test ./realrun/model -run '^$$' -bench 'FMAPeak|MicroKernel' -count $(BENCHCOUNT) | tee $(BENCHDIR)/peak.txt
	$(GO) test ./realrun/model -run '^$$' -bench 'GEMM|ChunkGrad/dot|RankCounts/dot' -benchtime 40x -count $(BENCHCOUNT) | tee $(BENCHDIR)/all.txt
	$(GO) test ./realrun -run '^$$' -bench 'TrainBucket' -benchtime 2x -count 3 | tee $(BENCHDIR)/train.txt
	@for l in generic avx2 avx512; do cat $(BENCHDIR)/all.txt $(BENCHDIR)/train.txt | grep -E "^Bench.*/$$l(/|-)" | sed "s,/$$l,," > $(BENCHDIR)/$$l.txt; done
	@for l in avx2 avx512; do if [ -s $(BENCHDIR)/$$l.txt ]; then echo "== generic vs $$l"; $(BENCHSTAT) $(BENCHDIR)/generic.txt $(BENCHDIR)/$$l.txt; fi; done

# Regenerate the assembly kernels (realrun/model/internal/asmgen, avo).
generate:
	$(GO) generate ./realrun/model

# A short fuzzing pass over every fuzz target.
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./orderings -run '^$$' -fuzz '^FuzzReplayValidate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./orderings -run '^$$' -fuzz '^FuzzReadJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./devices -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/graph -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/internal/cli -run '^$$' -fuzz '^FuzzIntList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./sim -run '^$$' -fuzz '^FuzzParseInterval$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/initemb -run '^$$' -fuzz '^FuzzNPYHeader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/initemb -run '^$$' -fuzz '^FuzzSplitTSV$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/gnn/data -run '^$$' -fuzz '^FuzzFeaturesTSV$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/gnn/data -run '^$$' -fuzz '^FuzzLabels$$' -fuzztime $(FUZZTIME)
	$(GO) test ./realrun/gnn/data -run '^$$' -fuzz '^FuzzNPYHeader$$' -fuzztime $(FUZZTIME)

# The command reference under docs/reference/, rendered from each command's
# own --help (make test fails when it is stale).
.PHONY: docs
docs:
	$(GO) test -count=1 -run '^TestReference$$' ./cmd/realrun ./cmd/simulate ./cmd/reproduce -update

# the tutorial's worked example (docs/tutorial.md) ("Your own graph, end to end"): a 3.4M-edge
# knowledge graph as a user brings one (tab-separated, a header line, names
# with spaces, test edges naming unseen nodes) in $(EXAMPLE_DIR).
EXAMPLE_DIR ?= /tmp/tierflow-example
.PHONY: example-graph
example-graph:
	$(GO) run ./cmd/internal/examplegraph $(EXAMPLE_DIR)

reproduce: $(BIN)/reproduce
	./$(BIN)/reproduce --out results

# The quality experiment needs Debian's WordNet database.
reproduce-quality: $(BIN)/reproduce
	@test -f /usr/share/wordnet/data.noun || ./scripts/apt-install.sh wordnet wordnet-base
	./$(BIN)/reproduce --out results --experiments quality

# gnn-graphs writes the GNN node-classification graphs (data.WriteFiles'
# layout) into $(GNN_DIR)/NAME/: WordNet (installs wordnet-base if missing)
# and Betty's five Table 4 datasets generated at their default scales
# (cmd/internal/gnngraph; about half a minute on 2 cores).
GNN_DIR ?= .cache/gnn
GNN_PRESETS := cora pubmed reddit ogbn-arxiv ogbn-products
.PHONY: gnn-graphs
gnn-graphs:
	@test -f /usr/share/wordnet/data.noun || ./scripts/apt-install.sh wordnet wordnet-base
	$(GO) build -o $(BIN)/gnngraph ./cmd/internal/gnngraph
	./$(BIN)/gnngraph wordnet $(GNN_DIR)/wordnet
	@for p in $(GNN_PRESETS); do echo "./$(BIN)/gnngraph generate $$p $(GNN_DIR)/$$p"; ./$(BIN)/gnngraph generate $$p $(GNN_DIR)/$$p || exit 1; done

# reproduce-models-pbg: tierflow's CPU engine beside PyTorch-BigGraph on
# the WordNet KG (installed if missing), same model (ComplEx = PBG's
# complex_diagonal + dot, TransE-L2 = translation + l2), loss, d,
# negatives, lr and epochs, 3 seeds: filtered test MRR, Hits@10 and
# training edges/s; results/models-pbg/ (the .json is reproduce --json's).
# PBG's source is not fetched (CI reaches neither GitHub nor, for PBG, the
# Go proxy): PBG_SRC=DIR names a checkout of
# github.com/facebookresearch/PyTorch-BigGraph (measured at 6fccd3f;
# PBG_COMMIT=SHA records the commit of a tree that is not a git checkout).
# Installs Debian's python3-torch, python3-h5py, python3-attr,
# python3-numpy and OpenBLAS when missing (pbg-deps). The environment
# picks the grid: TIERFLOW_MP_MODELS (MODEL[:LOSS[:MARGIN]],...),
# TIERFLOW_MP_SEEDS, TIERFLOW_MP_EPOCHS, TIERFLOW_MP_PBG_BATCH (PBG's
# batch sizes, default 1000,100: PBG's default, and the one that steps as
# often as tierflow). About 20 minutes on 2 cores (16 and 21 measured
# under load averages of 6 to 10).
# check-pbg-side checks scripts/pbg_side.py's ranking against a brute-force
# one from tierflow's formulas (ComplEx, TransE-L2, linear+cos) on a small
# random graph, and on a typed one (--schema: users in 2 partitions, items
# resident; candidates of the right type only) for TransE-L2 and ComplEx
# (scripts/pbg_side_selftest.py; about a minute).
.PHONY: reproduce-models-pbg pbg-deps pbg-src check-pbg-side
pbg-deps:
	@./scripts/apt-install.sh pbg-deps python3-torch python3-h5py python3-attr python3-numpy python3-yaml libopenblas0-openmp

pbg-src:
	@if [ -z "$(PBG_SRC)" ] || [ ! -f "$(PBG_SRC)/torchbiggraph/train.py" ]; then \
		echo "PBG_SRC=DIR must name a PyTorch-BigGraph checkout (github.com/facebookresearch/PyTorch-BigGraph; not fetched by this project), got '$(PBG_SRC)'" >&2; exit 2; fi

check-pbg-side: pbg-deps pbg-src
	PBG_SRC=$(abspath $(PBG_SRC)) /usr/bin/python3 scripts/pbg_side_selftest.py

reproduce-models-pbg: $(BIN)/reproduce pbg-deps pbg-src
	@test -f /usr/share/wordnet/data.noun || ./scripts/apt-install.sh wordnet wordnet-base
	@mkdir -p results/models-pbg
	PBG_SRC=$(abspath $(PBG_SRC)) ./$(BIN)/reproduce --out results --experiments models-pbg --json >results/models-pbg/models-pbg.json
	@cat results/models-pbg/models-pbg.md

# reproduce-quality-orderings: does the edge-bucket ordering, p or c change
# embedding quality? Filtered test MRR after a fixed number of epochs for
# every ordering at several (p, c) against the unpartitioned reference
# (p = 1), 3 training seeds, on the WordNet KG (needs Debian's WordNet
# database, installed if missing) and a generated Twitter-shaped graph;
# results/quality-orderings/ (the .json is reproduce --json's). About 25
# minutes on 2 cores. QO_RUNS=FILE keeps every finished run there as a JSON
# line and takes the runs already there instead of training them again (an
# interrupted run resumes). The convergence behind it (validation MRR per epoch,
# p = 1 against BETA at p = 16): ./bin/reproduce --experiments
# quality-orderings-curve (about 10 minutes).
.PHONY: reproduce-quality-orderings
reproduce-quality-orderings: $(BIN)/reproduce
	@test -f /usr/share/wordnet/data.noun || ./scripts/apt-install.sh wordnet wordnet-base
	@mkdir -p results/quality-orderings
	TIERFLOW_QO_RUNS=$(QO_RUNS) ./$(BIN)/reproduce --out results --experiments quality-orderings --json >results/quality-orderings/quality-orderings.json
	@cat results/quality-orderings/quality-orderings.md

# reproduce-models: every score function (DistMult, ComplEx, TransE L1/L2,
# RotatE, two PyTorch-BigGraph pairs; the softmax and the logistic loss with
# self-adversarial weights) on the WordNet KG at equal training time (20 s
# a run), 3 seeds: filtered test MRR and Hits@10, epochs, edges/s and the
# share of the FMA peak; results/models-quality/. About 12 minutes on 2
# cores.
.PHONY: reproduce-models
reproduce-models: $(BIN)/reproduce
	@test -f /usr/share/wordnet/data.noun || ./scripts/apt-install.sh wordnet wordnet-base
	@mkdir -p results/models-quality
	./$(BIN)/reproduce --out results --experiments models-quality --json >results/models-quality/models-quality.json
	@cat results/models-quality/models-quality.md

# reproduce-types: every score function (dot, DistMult, ComplEx, TransE
# L1/L2, RotatE, two PyTorch-BigGraph pairs) on a two-type user–item graph
# (cmd/internal/useritem: 30,000 users in 4 partitions, 3,000 resident
# items, about 290,000 training edges) through realrun --schema's CPU
# engine at equal training time (20 s a run), 3 seeds: filtered test MRR
# and Hits@10 against the nodes of the right type, epochs, edges/s and the
# share of the FMA peak; beside it PyTorch-BigGraph on the same files and
# schema (scripts/pbg_side.py --schema: TransE = translation+l2,
# translation+cos, ComplEx) when PBG_SRC=DIR names its checkout (see
# reproduce-models-pbg; without it the PBG rows are left out and the
# notes say so). The environment narrows it: TIERFLOW_MT_MODELS,
# TIERFLOW_MT_PBG_MODELS (none: no PBG), TIERFLOW_MT_SEEDS,
# TIERFLOW_MT_BUDGET, TIERFLOW_MT_USERS, TIERFLOW_MT_ITEMS,
# TIERFLOW_MT_PBG_BATCH. results/models-types/. About 25 minutes on 2
# cores.
.PHONY: reproduce-types
reproduce-types: $(BIN)/reproduce
	@if [ -n "$(PBG_SRC)" ]; then $(MAKE) --no-print-directory pbg-deps pbg-src PBG_SRC=$(PBG_SRC); fi
	@mkdir -p results/models-types
	PBG_SRC=$(if $(PBG_SRC),$(abspath $(PBG_SRC))) ./$(BIN)/reproduce --out results --experiments models-types --json >results/models-types/models-types.json
	@cat results/models-types/models-types.md

# reproduce-betty reproduces Betty's evaluation (§6) on GNNs: micro-batches
# of GraphSAGE and GAT batches split by REG, range, random and METIS
# (realrun/gnn/split), the memory estimator (realrun/gnn/memory) and the CPU
# engine's micro-batched training (realrun gnn --micro-batches), on graphs
# generated with the shapes of Betty's Table 4 datasets at their default
# scales; results/betty-*/ (each experiment's .md says how, where and when
# it was made). Needs gpmetis (metis-deps). About 8 minutes on 2 cores.
BETTY_EXPERIMENTS := betty-fig10,betty-fig11,betty-fig12,betty-fig13,betty-fig16,betty-table5,betty-table7
.PHONY: reproduce-betty
reproduce-betty: $(BIN)/reproduce metis-deps
	./$(BIN)/reproduce --out results --experiments $(BETTY_EXPERIMENTS)

# reproduce-edge-micro runs Betty's micro-batching on knowledge-graph
# embedding batches (realrun/micro): the edge-batch analogues of Betty's
# Figures 11/16, 12 and Table 7; results/edge-micro-*/. About a minute.
.PHONY: reproduce-edge-micro
reproduce-edge-micro: $(BIN)/reproduce
	./$(BIN)/reproduce --out results --experiments edge-micro-fig16,edge-micro-fig12,edge-micro-table7

# reproduce-gnn: node classification with realrun gnn's five models (mlp,
# sage-mean, sage-pool, sage-lstm, gat) on every graph of gnn-graphs —
# test accuracy, median and range over 3 seeds — and, on the ogbn-arxiv-,
# ogbn-products- and Reddit-shaped graphs, the speed of every model against a
# plain PyTorch implementation of the same models (scripts/gnn_torch.py)
# trained over the very batches realrun sampled (--save-blocks), same
# shape and 2 threads each; results/gnn/
# (README.md, written by the run, and gnn.json). Installs Debian's
# python3-torch, python3-numpy and OpenBLAS (libopenblas0-openmp: with the
# reference BLAS PyTorch's matrix products are ~60x slower) when missing,
# and self-tests the PyTorch script first (check-gnn-torch, ~30 s). About
# 20 minutes on 2 cores. GNN_RUNS=FILE keeps every finished run there and
# takes the runs already there instead of training them again (an
# interrupted run resumes); GNNBENCH_FLAGS adds gnnbench flags (--graphs,
# --seeds, --epochs, --speed-graphs, ...: go run ./cmd/internal/gnnbench -h).
.PHONY: reproduce-gnn gnn-torch-deps check-gnn-torch
gnn-torch-deps:
	@./scripts/apt-install.sh gnn-torch-deps python3-torch python3-numpy libopenblas0-openmp

check-gnn-torch: gnn-torch-deps
	/usr/bin/python3 scripts/gnn_torch_selftest.py

reproduce-gnn: build gnn-graphs check-gnn-torch
	$(GO) run ./cmd/internal/gnnbench --realrun $(BIN)/realrun --python /usr/bin/python3 --graph-dir $(GNN_DIR) \
		--out results/gnn --runs "$(GNN_RUNS)" $(GNNBENCH_FLAGS)

# reproduce-validate-trace runs one data-bound validation configuration
# (Freebase86m-shaped, d=128, p=32, c=3; BETA and Hilbert) with
# --compare-sim --trace and reads the trace back (tracecheck --summary):
# results/validate/trace-freebase86m-d128.{json,txt}. About 1.5 minutes.
VTRACE := results/validate/trace-freebase86m-d128
.PHONY: reproduce-validate-trace
reproduce-validate-trace: build
	@mkdir -p results/validate
	@w=$$(mktemp -d) && trap 'rm -rf "$$w"' EXIT && \
	./$(BIN)/realrun --workdir "$$w/work" --dataset freebase86m --scale 0.005 --model dot --dim 128 --negatives 4 \
		--batch 1000 --p 32 --c 3 --eval none --orderings beta,hilbert --ordering-seed 1 --progress none \
		--compare-sim --trace $(VTRACE).json >$(VTRACE).txt 2>&1 || { cat $(VTRACE).txt; exit 1; }
	$(GO) run ./cmd/internal/tracecheck --summary $(VTRACE).json >>$(VTRACE).txt
	./$(BIN)/reproduce --readme-only --out results --experiments validate
	@cat $(VTRACE).txt

# reproduce-validate-throttled (the generic reproduce-% rule below) runs the
# validation on a disk held by a kernel cgroup limit (root) to 150, 200, 250
# and 300 MB/s (the disk's own rates measured again before every round of
# repeats): two data-bound Freebase86m-shaped configurations × six
# orderings × 3 interleaved repeats, 5% tolerance; results/validate-throttled.*.
# About 20 minutes on 2 cores.
#
# reproduce-validate-databound runs the validation's method (the disk
# measured around every run, each run predicted three ways) on two
# data-bound configurations the validation does not hold (LiveJournal-shaped
# p=64 and Freebase86m-shaped p=48, d=256, c=4); results/validate-databound.*.
# About 12 minutes on 2 cores.
#
# reproduce-marius-ratios (root) trains BETA, Hilbert-symmetric and Hilbert
# at Marius Figure 10's d=100, p=32, c=8 on a disk held to p3.2xlarge's
# I/O-to-compute ratio; results/marius-ratios.*.

# reproduce-distributed (root) runs tierflow's distributed engine on the
# project's own test hosts: 1 and 2 trainers in network namespaces whose
# links to etcd and the object store are shaped with tc to 40 and 80 Mbit/s,
# each run beside the simulator's prediction for the same links;
# results/distributed/. About 9 minutes on 2 cores.
.PHONY: reproduce-distributed
reproduce-distributed: build
	$(GO) run ./cmd/internal/distbench --realrun $(BIN)/realrun --out results/distributed

# reproduce-scale (WORK=DIR, about 60 GB free; default /tmp) calibrates and
# trains two graphs larger than memory, BETA, Hilbert-symmetric and
# tierflow's order each, predicted from the calibration taken before the
# runs (scripts/reproduce-scale.sh): results/scale. About 90 minutes.
.PHONY: reproduce-scale
reproduce-scale: build $(BIN)/reproduce
	./scripts/reproduce-scale.sh $(or $(WORK),/tmp)/tierflow-scale

# reproduce-readmes writes every results/*/README.md from the files
# committed there without running anything (bin/reproduce --readme-only):
# after copying a GPU bundle's output into results/gpu/ or
# results/models-gpu/, after scale's commands, or after editing a note
# under experiments/notes/.
.PHONY: reproduce-readmes
reproduce-readmes: $(BIN)/reproduce
	./$(BIN)/reproduce --readme-only --out results

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

# HDF5 (--export-format pbg, PyTorch-BigGraph's checkpoint layout, and
# --init from a PBG checkpoint directory) goes through gonum.org/v1/hdf5,
# which needs cgo and Debian's libhdf5-dev: it is built only with -tags
# hdf5, and the default build stays free of cgo. hdf5-deps installs
# libhdf5-dev; h5py-deps also Debian's python3-h5py and python3-numpy,
# which the read-back tests run under /usr/bin/python3 (both root, once,
# skipped when present; scripts/apt-install.sh says which packages it
# installs with apt-get first, installs only the missing ones and upgrades
# nothing); test-hdf5 vets and runs the tagged tests;
# build-hdf5 builds bin/realrun with HDF5.
.PHONY: hdf5-deps h5py-deps test-hdf5 build-hdf5
hdf5-deps:
	@test -f /usr/include/hdf5/serial/hdf5.h || ./scripts/apt-install.sh hdf5-deps libhdf5-dev

h5py-deps: hdf5-deps
	@/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || ./scripts/apt-install.sh h5py-deps python3-h5py python3-numpy

test-hdf5: h5py-deps
	$(GO) vet -tags hdf5 ./realrun/pbgio/... ./realrun/initemb/... ./realrun/job/... ./cmd/realrun/...
	$(GO) test -count=1 -tags hdf5 ./realrun/pbgio/... ./realrun/initemb/...

build-hdf5: hdf5-deps
	@mkdir -p $(BIN)
	$(GO) build -tags hdf5 -o $(BIN)/realrun ./cmd/realrun

# CI's CUDA check (no GPU needed): see scripts/cuda-check.sh.
cuda-check:
	./scripts/cuda-check.sh

# The GPU bundle: everything the GPU-verification run needs on a GPU
# machine without Go or network, in the ignored folder gpu-bundle/ (run it
# there with `bash gpu-bundle/run.sh OUTDIR`; see
# scripts/gpu-bundle/README.txt.in): bin/realrun (-tags cuda),
# wn18/ (the WordNet KG of the quality step; installs wordnet-base),
# bin/realrun-nogpu (the default build, the emulator stand-in), the test
# binaries (cuda- and default-tagged realrun/cuda, cuda-tagged telemetry),
# stripped, and run.sh. The kernels are the committed PTX (make ptx
# regenerates it; cuda-check checks it is current). Fails above
# GPU_BUNDLE_MAX_MB.
GPU_BUNDLE := gpu-bundle
GPU_BUNDLE_MAX_MB ?= 60
STRIPPED := -trimpath -ldflags "-s -w"
.PHONY: gpu-bundle check-gpu-bundle
gpu-bundle: cuda-deps
	rm -rf $(GPU_BUNDLE) && mkdir -p $(GPU_BUNDLE)/bin $(GPU_BUNDLE)/tests
	@# -tags nodist: the bundle has no use for the distributed run, whose
	@# etcd would add 32 MB to each binary.
	$(GO) build -tags "cuda nodist" $(STRIPPED) -o $(GPU_BUNDLE)/bin/realrun ./cmd/realrun
	$(GO) build -tags nodist $(STRIPPED) -o $(GPU_BUNDLE)/bin/realrun-nogpu ./cmd/realrun
	$(GO) test -c -tags cuda $(STRIPPED) -o $(GPU_BUNDLE)/tests/cuda.test ./realrun/cuda
	$(GO) test -c -tags cuda $(STRIPPED) -o $(GPU_BUNDLE)/tests/telemetry.test ./realrun/telemetry
	$(GO) test -c $(STRIPPED) -o $(GPU_BUNDLE)/tests/cuda-emu.test ./realrun/cuda
	@# The tests read files beside their package's source (kernels/train.cu,
	@# kernels/cpu/*): run.sh runs each test binary in its copy of the package dir.
	for pkg in realrun/cuda realrun/telemetry; do \
		mkdir -p $(GPU_BUNDLE)/tests/$$pkg && \
		(cd $$pkg && find . -type f ! -name '*.go' -print0 | xargs -0 -r cp --parents -t $(CURDIR)/$(GPU_BUNDLE)/tests/$$pkg) || exit 1; \
	done
	install -m 755 scripts/gpu-bundle/run.sh $(GPU_BUNDLE)/run.sh
	install -m 644 scripts/gpu-bundle/ceilings.py $(GPU_BUNDLE)/ceilings.py
	install -m 755 scripts/gpu-bundle/models.sh $(GPU_BUNDLE)/models.sh
	install -m 644 scripts/gpu-bundle/cublas.sh $(GPU_BUNDLE)/cublas.sh
	@# The quality step's graph: the WN18-style WordNet KG (Debian's wordnet-base).
	@test -f /usr/share/wordnet/data.noun || ./scripts/apt-install.sh wordnet wordnet-base
	$(GO) run ./cmd/internal/wordnetkg $(GPU_BUNDLE)/wn18
	@commit="$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"; \
	date="$$(date -u +%Y-%m-%dT%H:%M:%SZ)"; gov="$$($(GO) env GOVERSION)"; \
	printf 'commit %s\ndate %s\ngo %s\n' "$$commit" "$$date" "$$gov" >$(GPU_BUNDLE)/BUILD; \
	sed -e "s|@COMMIT@|$$commit|" -e "s|@DATE@|$$date|" -e "s|@GOVERSION@|$$gov|" scripts/gpu-bundle/README.txt.in >$(GPU_BUNDLE)/README.txt
	@kb=$$(du -sk $(GPU_BUNDLE) | cut -f1); mb=$$(awk -v k=$$kb 'BEGIN { printf "%.1f", k / 1024 }'); \
	if [ $$kb -gt $$(($(GPU_BUNDLE_MAX_MB) * 1024)) ]; then echo "gpu-bundle: $$mb MB exceeds $(GPU_BUNDLE_MAX_MB) MB" >&2; exit 1; fi; \
	echo "gpu-bundle: $(GPU_BUNDLE)/ is $$mb MB (limit $(GPU_BUNDLE_MAX_MB) MB); run it with: bash $(GPU_BUNDLE)/run.sh OUTDIR"

# Opt-in (not in test): the bundle end to end on this machine (without a
# GPU the emulator stands in), then its steps.json checked by
# cmd/internal/bundlecheck: every step run or skipped with a reason. The
# budget is larger than the GPU machine's default (480 s): here the
# emulator runs the CUDA engine's tests, whose 30% share of 480 s (144 s)
# this 2-core machine overran (the package alone: 224 s on 2026-11-28).
GPU_BUNDLE_OUT ?= /tmp/gpu-bundle-check
CHECK_GPU_BUNDLE_BUDGET ?= 1000
check-gpu-bundle: gpu-bundle
	@rm -rf $(GPU_BUNDLE_OUT); start=$$(date +%s); \
	GPU_BUNDLE_BUDGET=$(CHECK_GPU_BUNDLE_BUDGET) bash $(GPU_BUNDLE)/run.sh $(GPU_BUNDLE_OUT); rc=$$?; \
	echo "check-gpu-bundle: run.sh exited $$rc after $$(($$(date +%s) - start)) s"; \
	$(GO) run ./cmd/internal/bundlecheck $(GPU_BUNDLE_OUT) && [ $$rc -eq 0 ]

# Opt-in (not in test): open the traces that --trace writes in speedscope in
# headless Chromium, installing both when missing, and fail on any error the
# viewer reports; writes docs/trace-compare-sim.png. See scripts/check-trace.sh.
.PHONY: check-trace
check-trace:
	./scripts/check-trace.sh

clean:
	rm -rf $(BIN)
