# tierflow — build, run, test and reproduce. Needs only Go (see go.mod).
GO ?= go
BIN := bin
CMDS := simulate reproduce realrun

.PHONY: all build run test fmt-check vet tidy-check bench fuzz reproduce clean

all: build

build: $(addprefix $(BIN)/,$(CMDS))

$(BIN)/%: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./cmd/$*

FORCE:

# The main job: per-ordering swaps and bytes for p=32, c=8 (Freebase86m, d=100).
run: $(BIN)/simulate
	./$(BIN)/simulate --p 32 --c 8

test: fmt-check vet tidy-check
	$(GO) test -count=1 ./...

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

# reproduce-betty runs the three Betty experiments (micro-batching; about 3 minutes).
.PHONY: reproduce-betty
reproduce-betty: $(BIN)/reproduce
	./$(BIN)/reproduce --out results --experiments betty-fig16,betty-fig12,betty-table7

# reproduce-NAME runs one experiment (see `bin/reproduce --help` for names).
reproduce-%: $(BIN)/reproduce
	./$(BIN)/reproduce --out results --experiments $*

clean:
	rm -rf $(BIN)
