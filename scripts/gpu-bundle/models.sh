#!/usr/bin/env bash
# models.sh OUTDIR: the GPU bundle's check of every score function and loss
# on a GPU (make gpu-bundle installs it beside run.sh; it needs bash,
# coreutils and awk, and python3 with PyTorch for the ceilings only). It
# runs, writing under OUTDIR:
#
#   ceilings.json  ceilings.py: the GPU's FP32 SGEMM rate (the FMA peak the
#                  models' FLOPs are quoted against) and its copies
#   tests.txt      tests/cuda.test on the GPU: every model's chunk against
#                  the Go model (TestEveryModelMatchesModel), the models'
#                  Adagrad steps against the CPU engine
#                  (TestModelsStepMatchCPU), Dot's chunk, step and MRR
#   bench.txt      BenchmarkChunkModels: one chunk (1,000 edges, 1,000
#                  negatives, d = 100, FP32) of each model, edges/s, and
#                  BenchmarkChunkKernels' Dot chunk at the same shape
#   quality/       wn18/ (the WN18-style WordNet KG), 10 epochs, seed 1,
#                  every model (and ComplEx and RotatE with the logistic
#                  loss and self-adversarial α 1) on --engine cuda and on
#                  --engine cpu with the same flags: test MRR, Hits@10,
#                  training seconds
#   summary.txt    the table printed at the end
#
# Settings (environment): MODELS_EPOCHS (default 10), MODELS_SEED (1),
# MODELS_ONLY (the quality runs to do, by name: "linear+dot affine+l2"; all
# when unset), MODELS_CPU=0 (no CPU engine runs: the GPU's side only),
# MODELS_BENCHTIME (chunks per benchmark, default 200), MODELS_CEILINGS=0
# (no ceilings.py),
# TIERFLOW_CUBLAS (found through python3's nvidia package when unset),
# MODELS_EMULATE=1 (a plumbing check without a GPU: the emulator's build and
# tests, a tiny generated graph at d = 16; nothing it prints is a measurement).
# Exit status: 0 when every step ran, 1 when one failed, 2 on bad usage.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -ne 1 ] || [ -z "$1" ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: bash $0 OUTDIR" >&2
	exit 2
fi
mkdir -p "$1/quality" "$1/logs" || exit 2
OUT=$(cd "$1" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAILED=0
EPOCHS=${MODELS_EPOCHS:-10}
SEED=${MODELS_SEED:-1}
. "$HERE/cublas.sh"
RR=("$HERE/bin/realrun")
TESTBIN="$HERE/tests/cuda.test"
WN="$HERE/wn18"
QSHAPE=(--edges "$WN/train.tsv" --valid "$WN/valid.tsv" --test "$WN/test.tsv" --epochs "$EPOCHS")
if [ "${MODELS_EMULATE:-0}" = 1 ]; then
	RR=(env TIERFLOW_EMULATE_GPU=1 "$HERE/bin/realrun-nogpu")
	TESTBIN="$HERE/tests/cuda-emu.test"
	QSHAPE=(--dataset fb15k --scale 0.02 --dim 16 --negatives 16 --epochs 1)
fi
QSHAPE+=(--eval end --seed "$SEED" --progress none --json)
SUM="$OUT/summary.txt"
: >"$SUM"
say() { printf '%s\n' "$*" | tee -a "$SUM"; }
# jnum FILE KEY: the last number under "KEY" in an indented JSON file.
jnum() { grep -o "\"$2\": *-\{0,1\}[0-9][0-9.eE+-]*" "$1" 2>/dev/null | sed 's/.*: *//' | tail -n 1; }

say "models.sh: $(grep -m1 commit "$HERE/BUILD" 2>/dev/null) on $(hostname), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "GPU: $(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -n 1)"
say "cuBLAS: ${TIERFLOW_CUBLAS:-none} ($CUBLAS_FROM)"

# --- ceilings (PyTorch), in the background: the CPU runs below use the
# host's cores, not the GPU; the GPU steps wait for it.
PY=""
for py in python3 /opt/torch/.venv/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && timeout 60 "$py" -c 'import torch' >/dev/null 2>&1; then
		PY=$py
		break
	fi
done
if [ "${MODELS_CEILINGS:-1}" = 0 ]; then
	say "ceilings: skipped (MODELS_CEILINGS=0)"
elif [ -n "$PY" ]; then
	timeout 120 "$PY" "$HERE/ceilings.py" >"$OUT/ceilings.json" 2>"$OUT/logs/ceilings.stderr" || { say "ceilings: failed: $(tail -n 2 "$OUT/logs/ceilings.stderr")"; FAILED=1; }
else
	say "ceilings: skipped (no python3 with PyTorch)"
fi
PEAK=$(jnum "$OUT/ceilings.json" sgemm_fp32_flops)
say "FP32 SGEMM ceiling: $(awk -v p="${PEAK:-0}" 'BEGIN { printf "%.1f TFLOP/s", p / 1e12 }')"

# --- the CPU engine's quality runs, all at once in the background (two
# workers each; the machine has 16 cores).
RUNS=("distmult --model distmult" "complex --model complex" "complex-logistic --model complex --loss logistic --adversarial 1"
	"transe-l2 --model transe-l2" "transe-l1 --model transe-l1" "rotate --model rotate"
	"rotate-logistic --model rotate --loss logistic --margin 6 --adversarial 1" "linear+dot --model linear+dot"
	"diagonal+cos --model diagonal+cos" "affine+l2 --operator affine --comparator l2 --loss ranking --margin 0.1")
if [ -n "${MODELS_ONLY:-}" ]; then
	keep=()
	for spec in "${RUNS[@]}"; do
		read -r name _ <<<"$spec"
		case " $MODELS_ONLY " in *" $name "*) keep+=("$spec") ;; esac
	done
	RUNS=("${keep[@]}")
fi
ENGINES="cuda cpu"
[ "${MODELS_CPU:-1}" = 0 ] && ENGINES=cuda
for spec in "${RUNS[@]}"; do
	[ "$ENGINES" = cuda ] && break
	read -r name args <<<"$spec"
	# shellcheck disable=SC2086 # args is a list of flags
	(timeout 300 "${RR[@]}" --engine cpu --workers 2 $args "${QSHAPE[@]}" --workdir "$WORK/cpu-$name" \
		>"$OUT/quality/cpu-$name.json" 2>"$OUT/logs/cpu-$name.stderr"; echo $? >"$OUT/quality/.cpu-$name.rc"; rm -rf "$WORK/cpu-$name") &
done

# --- the tests on the GPU.
cd "$HERE/tests/realrun/cuda" || exit 1
t0=$(date +%s)
timeout 300 "$TESTBIN" -test.v -test.count=1 -test.timeout=280s \
	-test.run '^(TestChunkMatchesModel|TestEveryModelMatchesModel|TestStepMatchesCPU|TestModelsStepMatchCPU|TestMRRMatchesCPU)$' >"$OUT/tests.txt" 2>&1
rc=$?
say "tests: exit $rc, $(grep -c -- '--- PASS' "$OUT/tests.txt") passed, $(grep -c -- '--- FAIL' "$OUT/tests.txt") failed, $(grep -c -- '--- SKIP' "$OUT/tests.txt") skipped ($(($(date +%s) - t0)) s)"
grep -- '--- FAIL' "$OUT/tests.txt" | head -n 20 | tee -a "$SUM"
[ $rc = 0 ] || FAILED=1

wait # the CPU engine's runs: the host quiet for the GPU's timings

# --- every model's chunk, FP32.
t0=$(date +%s)
[ "${MODELS_EMULATE:-0}" = 1 ] && : >"$OUT/bench.txt" || timeout 200 "$TESTBIN" -test.run '^$' -test.bench '^(BenchmarkChunkModels|BenchmarkChunkKernels/fp32/chunk)' -test.benchtime "${MODELS_BENCHTIME:-200}x" >"$OUT/bench.txt" 2>&1
rc=$?
say "bench: exit $rc ($(($(date +%s) - t0)) s)"
[ $rc = 0 ] || FAILED=1
grep -E '^Benchmark' "$OUT/bench.txt" | awk '{ for (i = 1; i <= NF; i++) if ($i == "edges/s") printf "  %-52s %14s edges/s\n", $1, $(i-1) }' | tee -a "$SUM"
cd "$OUT" || exit 1

# --- the CUDA engine's quality runs, one at a time (the CPU engine's are done).
for spec in "${RUNS[@]}"; do
	read -r name args <<<"$spec"
	# shellcheck disable=SC2086
	timeout 200 "${RR[@]}" --engine cuda $args "${QSHAPE[@]}" --workdir "$WORK/cuda-$name" \
		>"$OUT/quality/cuda-$name.json" 2>"$OUT/logs/cuda-$name.stderr"
	echo $? >"$OUT/quality/.cuda-$name.rc"
	rm -rf "$WORK/cuda-$name"
done

say ""
say "quality: wn18/, $EPOCHS epochs, seed $SEED, realrun's defaults otherwise: test MRR / Hits@10 / training s"
say "$(printf '%-18s %8s %8s %8s   %8s %8s %8s' run cuda-MRR H@10 s cpu-MRR H@10 s)"
for spec in "${RUNS[@]}"; do
	read -r name _ <<<"$spec"
	row=$(printf '%-18s' "$name")
	for eng in $ENGINES; do
		f="$OUT/quality/$eng-$name.json"
		rc=$(cat "$OUT/quality/.$eng-$name.rc" 2>/dev/null || echo 1)
		rm -f "$OUT/quality/.$eng-$name.rc"
		if [ "$rc" = 0 ]; then
			secs=$(grep -o '"epoch_seconds": *[0-9.eE+-]*' "$f" | sed 's/.*: *//' | awk '{ s += $1 } END { printf "%.1f", s }')
			row="$row $(printf '%8.4f %8.4f %8s  ' "$(jnum "$f" mrr)" "$(jnum "$f" hits_at_10)" "$secs")"
		else
			row="$row $(printf '%8s %8s %8s  ' "exit $rc" - -)"
			FAILED=1
			tail -n 2 "$OUT/logs/$eng-$name.stderr" | sed "s/^/  $eng-$name: /" >>"$SUM"
		fi
	done
	say "$row"
done
exit $FAILED
