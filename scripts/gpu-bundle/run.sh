#!/usr/bin/env bash
# run.sh OUTDIR: the GPU bundle's one call (make gpu-bundle builds the
# bundle around it; see README.txt there). It needs bash and coreutils only
# (no Go, no network, no Python): it runs the cuda-tagged test binaries, the
# emulator's engine tests, the throughput shapes of the GPU-verification
# issue, a small quality run (cpu against cuda), `realrun calibrate` and
# `realrun --compare-sim --engine cuda` in each buffer mode, and writes
# under OUTDIR:
#
#   env.json      the machine: date, host, CPUs, GPU (nvidia-smi), cuBLAS, mode
#   steps.json    one {"step","status","reason","seconds","outputs"} per step;
#                 status is run, "run (emulated: no GPU)", skipped or failed
#                 (reason: why, or a one-line note for a step that ran)
#   summary.txt   the table printed at the end, with throughput and quality
#   logs/         every command's stderr (and stdout where it is not JSON)
#   tests/, throughput/, quality/, calibrate/, compare-sim/  the outputs
#
# Without a usable GPU (no nvidia-smi, or the cuda binary's probe says "no
# usable CUDA GPU") every GPU step runs the same command through the
# stand-in instead: the default build with TIERFLOW_EMULATE_GPU=1, whose
# CUDA engine runs on the pure-Go emulator, at tiny shapes (seconds each);
# those steps are recorded as "run (emulated: no GPU)".
#
# Settings (environment): GPU_BUNDLE_BUDGET (seconds for the whole run,
# default 480; a step that would start later is skipped, each command's
# time limit is cut to what is left), GPU_BUNDLE_SCALE (twitter scale of
# the throughput runs on a GPU, default 0.01), GPU_BUNDLE_EMULATE=1 (use
# the stand-in even where a GPU is present), TIERFLOW_CUBLAS (cuBLAS; found
# through python3's nvidia package when unset).
#
# Exit status: 0 when no step failed, 1 otherwise, 2 on bad usage.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -ne 1 ] || [ -z "$1" ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: bash $0 OUTDIR" >&2
	exit 2
fi
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
mkdir -p "$OUT/logs" "$OUT/tests" "$OUT/throughput" "$OUT/quality" "$OUT/calibrate" "$OUT/compare-sim"
WORK="$OUT/work" # work directories of the runs, removed after each
BUDGET=${GPU_BUNDLE_BUDGET:-480}
START=$(date +%s)
STEPS="$OUT/.steps.jsonl"
SUMLINES="$OUT/.summary-lines"
: >"$STEPS"
: >"$SUMLINES"
FAILED=0

# ---------------------------------------------------------------- helpers

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# left: seconds until the current group's deadline (see budget).
END=$((START + BUDGET))
left() { echo $((END - $(date +%s))); }

# jstr S: S as a JSON string.
jstr() {
	local s
	s=$(printf '%s' "$1" | tr -d '\000-\010\013\014\016-\037')
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/}
	printf '"%s"' "$s"
}

# oneline FILE: the last lines of FILE that say something, joined.
oneline() {
	[ -s "$1" ] || return 0
	grep -v '^[[:space:]]*$' "$1" | tail -n "${2:-3}" | tr '\n' ' ' | cut -c1-400 | sed 's/ *$//'
}

# jnum FILE KEY [last]: the first (or last) number under "KEY" in a JSON
# file (the outputs are indented JSON: one key per line).
jnum() {
	local v
	v=$(grep -o "\"$2\": *-\{0,1\}[0-9][0-9.eE+-]*" "$1" 2>/dev/null | sed 's/.*: *//')
	if [ "${3:-}" = last ]; then v=$(printf '%s\n' "$v" | tail -n 1); else v=$(printf '%s\n' "$v" | head -n 1); fi
	printf '%s' "$v"
}

# jstrval FILE KEY: the first string under "KEY" in a JSON file.
jstrval() {
	grep -m1 -o "\"$2\": *\"[^\"]*\"" "$1" 2>/dev/null | sed 's/^[^:]*: *"//; s/"$//'
}

# fmt PRINTF-FORMAT NUMBER [SCALE]: NUMBER × SCALE formatted, or "-".
fmt() {
	if [ -z "${2:-}" ]; then
		printf -- '-'
	else
		awk -v f="$1" -v x="$2" -v s="${3:-1}" 'BEGIN { printf f, x * s }'
	fi
}

# record STEP STATUS REASON SECONDS OUTPUT...: one entry of steps.json.
record() {
	local step=$1 status=$2 reason=$3 secs=$4 o outs="" sep=""
	shift 4
	for o in "$@"; do
		[ -e "$OUT/$o" ] || continue
		outs="$outs$sep$(jstr "$o")"
		sep=", "
	done
	printf '{"step": %s, "status": %s, "reason": %s, "seconds": %s, "outputs": [%s]}\n' \
		"$(jstr "$step")" "$(jstr "$status")" "$(jstr "$reason")" "$secs" "$outs" >>"$STEPS"
	[ "$status" = failed ] && FAILED=1
	printf '%-34s %-24s %8s  %s\n' "$step" "$status" "$secs" "$reason" | cut -c1-240 | tee -a "$SUMLINES"
}

# skip STEP REASON
skip() { record "$1" skipped "$2" 0; }

# budget STEP [SHARE]: false (and the step recorded as skipped) once SHARE
# percent of the budget (default 100) is spent; the step's commands must
# end by then too, so that a slow group leaves time to the later ones.
budget() {
	END=$((START + BUDGET * ${2:-100} / 100))
	if [ "$(left)" -le 5 ]; then
		skip "$1" "time budget spent: ${2:-100}% of ${BUDGET} s (GPU_BUNDLE_BUDGET) is this step's share"
		return 1
	fi
}

# execute STDOUT STDERR LIMIT CMD...: runs CMD under a time limit (cut to
# the budget left); sets RC and SECS.
execute() {
	local out=$1 err=$2 limit=$3 t0 rem
	shift 3
	rem=$(left)
	[ "$rem" -lt "$limit" ] && limit=$((rem > 10 ? rem : 10))
	LIMIT=$limit
	t0=$(now)
	timeout --kill-after=10 "$limit" "$@" >"$out" 2>"$err"
	RC=$?
	SECS=$(since "$t0")
}

# failure ERRFILE: why a command failed, in one line.
failure() {
	case $RC in
	124 | 137) echo "timed out after ${LIMIT} s: $(oneline "$1" 1 | grep . || echo 'no output')" ;;
	*) echo "exit $RC: $(oneline "$1" | grep . || echo 'no output')" ;;
	esac
}

# ------------------------------------------------------ the machine, the GPU

GPU=0
NOGPU=""
PROBE_ERR="$OUT/logs/probe.stderr"
if [ "${GPU_BUNDLE_EMULATE:-0}" = 1 ]; then
	NOGPU="GPU_BUNDLE_EMULATE=1"
else
	timeout 60 "$HERE/bin/realrun" --engine cuda --p 0 >/dev/null 2>"$PROBE_ERR"
	prc=$?
	if ! command -v nvidia-smi >/dev/null 2>&1; then
		NOGPU="nvidia-smi not found"
	fi
	if grep -q "no usable CUDA GPU" "$PROBE_ERR"; then
		NOGPU="${NOGPU:+$NOGPU; }$(grep -o -m1 'no usable CUDA GPU ([^)]*)' "$PROBE_ERR")"
	elif [ "$prc" = 127 ] || [ "$prc" = 124 ] || grep -q "error while loading shared libraries" "$PROBE_ERR"; then
		NOGPU="${NOGPU:+$NOGPU; }bin/realrun does not start (exit $prc): $(oneline "$PROBE_ERR" 1)"
	fi
	[ -z "$NOGPU" ] && GPU=1
fi
if [ "$GPU" = 1 ]; then
	RR=("$HERE/bin/realrun")
	RRCPU=("$HERE/bin/realrun")
	EMU=""
	RUN="run"
else
	RR=(env TIERFLOW_EMULATE_GPU=1 "$HERE/bin/realrun-nogpu")
	RRCPU=("$HERE/bin/realrun-nogpu")
	EMU="stand-in"
	RUN="run (emulated: no GPU)"
fi

# cuBLAS: pip's CUDA wheels (nvidia/cu13/lib or nvidia/cublas/lib), found
# by cublas.sh (shared with models.sh): sets TIERFLOW_CUBLAS and CUBLAS_FROM.
. "$HERE/cublas.sh"

{
	smi="null"
	cudaver=""
	if command -v nvidia-smi >/dev/null 2>&1; then
		smi=$(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 4)
		cudaver=$(timeout 30 nvidia-smi 2>/dev/null | grep -o 'CUDA Version: *[0-9.]*' | head -n 1 | sed 's/.*: *//')
		smi=$(jstr "$smi")
	fi
	printf '{\n'
	printf '  "date": %s,\n' "$(jstr "$(date -u +%Y-%m-%dT%H:%M:%SZ)")"
	printf '  "hostname": %s,\n' "$(jstr "$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)")"
	printf '  "nproc": %s,\n' "$(nproc)"
	printf '  "kernel": %s,\n' "$(jstr "$(uname -sr)")"
	printf '  "mode": %s,\n' "$(jstr "$([ "$GPU" = 1 ] && echo gpu || echo emulated)")"
	printf '  "no_gpu_reason": %s,\n' "$(jstr "$NOGPU")"
	printf '  "nvidia_smi": %s,\n' "$smi"
	printf '  "cuda_driver_version": %s,\n' "$(jstr "$cudaver")"
	printf '  "cublas": %s,\n' "$(jstr "${TIERFLOW_CUBLAS:-}")"
	printf '  "cublas_found_by": %s,\n' "$(jstr "$CUBLAS_FROM")"
	printf '  "budget_seconds": %s,\n' "$BUDGET"
	printf '  "bundle": %s\n' "$(jstr "$(cat "$HERE/BUILD" 2>/dev/null)")"
	printf '}\n'
} >"$OUT/env.json"

echo "gpu-bundle: $(grep -m1 commit "$HERE/BUILD" 2>/dev/null) on $(hostname 2>/dev/null), $(nproc) CPUs; output in $OUT"
if [ "$GPU" = 1 ]; then
	echo "gpu-bundle: GPU: $(timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)"
else
	echo "gpu-bundle: no usable GPU ($NOGPU): the GPU steps run on the emulator (TIERFLOW_EMULATE_GPU=1 bin/realrun-nogpu) at tiny shapes"
fi
echo "gpu-bundle: cuBLAS: ${TIERFLOW_CUBLAS:-none found} ($CUBLAS_FROM)"
printf '%-34s %-24s %8s  %s\n' step status seconds "reason / note"

# ---------------------------------------------------------------- the steps

# tests NAME PACKAGE BINARY ARGS...: a test binary's -test.v run,
# summarised. It runs in the bundle's copy of its package directory
# (tests/PACKAGE: the files its tests read beside the source, as go test
# would run it).
tests() {
	local name=$1 dir="$HERE/tests/$2" bin=$3 log="tests/${1##*/}.txt"
	shift 3
	budget "$name" 30 || return
	local err="$OUT/logs/${name//\//-}.stderr"
	[ -d "$dir" ] || dir="$OUT/tests"
	cd "$dir" || return
	execute "$OUT/$log" "$err" 300 "$bin" -test.v -test.count=1 -test.timeout=280s "$@"
	cd "$OUT" || return
	cat "$err" >>"$OUT/$log"
	local pass fail skip note
	pass=$(grep -c '^--- PASS' "$OUT/$log")
	fail=$(grep -c '^--- FAIL' "$OUT/$log")
	skip=$(grep -c '^--- SKIP' "$OUT/$log")
	note="$pass passed, $fail failed, $skip skipped"
	if [ "$RC" = 0 ] && grep -q "no usable CUDA GPU" "$OUT/$log"; then
		record "$name" skipped "$(grep -m1 -o 'no usable CUDA GPU.*' "$OUT/$log"); the engine tests run on the emulator in emulator-tests" "$SECS" "$log"
	elif [ "$RC" = 0 ]; then
		record "$name" run "$note" "$SECS" "$log"
	elif [ "$GPU" = 0 ] && [ "$RC" = 127 ]; then
		record "$name" skipped "cannot start without the CUDA driver: $(oneline "$OUT/$log" 1)" "$SECS" "$log"
	else
		record "$name" failed "$note; $(failure "$OUT/$log")" "$SECS" "$log"
	fi
}

# --- the GPU's own ceilings (ceilings.py: copies and matrix products
# through PyTorch, where the machine has it), to quote the engine against.
PY=""
for py in python3 /opt/torch/.venv/bin/python3; do
	if command -v "$py" >/dev/null 2>&1 && timeout 60 "$py" -c 'import torch' >/dev/null 2>&1; then
		PY=$py
		break
	fi
done
if [ "$GPU" != 1 ]; then
	skip ceilings "no GPU: nothing to measure"
elif [ -z "$PY" ]; then
	skip ceilings "no python3 with PyTorch on this machine (ceilings.py needs it)"
elif budget ceilings 10; then
	execute "$OUT/ceilings.json" "$OUT/logs/ceilings.stderr" 90 "$PY" "$HERE/ceilings.py"
	if [ "$RC" = 0 ]; then
		record ceilings run "FP32 SGEMM $(fmt '%.1f' "$(jnum "$OUT/ceilings.json" sgemm_fp32_flops)" 1e-12) TFLOP/s, TF32 $(fmt '%.1f' "$(jnum "$OUT/ceilings.json" sgemm_tf32_flops)" 1e-12), the engine's batched shape $(fmt '%.1f' "$(jnum "$OUT/ceilings.json" sgemm_batched_fp32_flops)" 1e-12) / $(fmt '%.1f' "$(jnum "$OUT/ceilings.json" sgemm_batched_tf32_flops)" 1e-12); copies D2D $(fmt '%.0f' "$(jnum "$OUT/ceilings.json" d2d_bytes_per_s)" 1e-9) GB/s, H2D $(fmt '%.1f' "$(jnum "$OUT/ceilings.json" h2d_bytes_per_s)" 1e-9), D2H $(fmt '%.1f' "$(jnum "$OUT/ceilings.json" d2h_bytes_per_s)" 1e-9)" "$SECS" ceilings.json
	else
		rm -f "$OUT/ceilings.json"
		record ceilings failed "$(failure "$OUT/logs/ceilings.stderr")" "$SECS"
	fi
fi

tests gpu-tests/cuda realrun/cuda "$HERE/tests/cuda.test"
tests gpu-tests/telemetry realrun/telemetry "$HERE/tests/telemetry.test"
# TestDefaultBuildHasNoCU runs `go list` on the source tree: not here. On a
# GPU the emulator's tests (the same engine tests, kernels on the CPU) say
# nothing `make test` has not said, and take a minute of GPU time.
if [ "$GPU" = 1 ] && [ "${GPU_BUNDLE_EMULATOR_TESTS:-0}" != 1 ]; then
	skip emulator-tests "on a GPU: make test runs them without one (GPU_BUNDLE_EMULATOR_TESTS=1 runs them here too)"
else
	# TestKernelSourceCatchesPlantedBugs compiles train.cu with each planted
	# bug (g++): a check of the source, which make test runs, not of this
	# build, and over a minute of this step's budget.
	tests emulator-tests realrun/cuda "$HERE/tests/cuda-emu.test" -test.skip '^(TestDefaultBuildHasNoCU|TestKernelSourceCatchesPlantedBugs)$'
fi

# train STEP OUTPUT LIMIT KEY REALRUN-ARGS...: one realrun --json run into
# OUTPUT (relative to OUT) in the work directory named KEY, started over
# (--overwrite: the graph a run with the same KEY generated is kept, its
# partitions initialised afresh); sets RC and STATUS/REASON.
train() {
	local step=$1 output=$2 limit=$3 key=$4 err
	shift 4
	err="$OUT/logs/${step//\//-}.stderr"
	mkdir -p "$WORK"
	execute "$OUT/$output" "$err" "$limit" "$@" --workdir "$WORK/$key" --overwrite --progress none --json
	if [ "$RC" = 0 ]; then
		STATUS=$RUN REASON=$EMU
	else
		STATUS=failed REASON=$(failure "$err")
	fi
}

# --- throughput: Dot, d=100, batches of 50,000 in chunks of 1,000 sharing
# 1,000 negatives on a Twitter-shaped graph, one epoch each.
if [ "$GPU" = 1 ]; then
	SHAPE=(--dataset twitter --scale "${GPU_BUNDLE_SCALE:-0.01}" --model dot --dim 100 --batch 50000 --chunk 1000 --negatives 1000)
	TLIMIT=90
else
	SHAPE=(--dataset twitter --scale 0.0001 --model dot --dim 16 --batch 1000 --chunk 16 --negatives 16)
	TLIMIT=60
fi
TP_ROWS=()
# Each update: the chunk step (an Adagrad step after every chunk, as the
# CPU engine) with each duplicate-row rule (each: a step per occurrence;
# -sum: one with the summed gradient), and the batch step (-batchstep,
# --micro-batches 1: Marius' and GE2's), on TF32 tensor cores (the CUDA
# engine's default) and (-fp32) in plain FP32; -direct: the chunk step's
# launches made one by one instead of replayed as CUDA graphs
# (TIERFLOW_CUDA_GRAPHS=0).
TP_SPECS=("in-gpu gpu 4 4 beta" "in-gpu-fp32 gpu 4 4 beta --fp32" "in-gpu-direct gpu 4 4 beta" "in-gpu-sum gpu 4 4 beta --duplicates sum"
	"in-gpu-batchstep gpu 4 4 beta --micro-batches 1" "in-gpu-batchstep-fp32 gpu 4 4 beta --micro-batches 1 --fp32"
	"gpu-beta gpu 16 4 beta" "gpu-beta-fp32 gpu 16 4 beta --fp32" "gpu-beta-batchstep gpu 16 4 beta --micro-batches 1"
	"host-beta host 16 4 beta" "host-beta-batchstep host 16 4 beta --micro-batches 1")
for spec in "${TP_SPECS[@]}"; do
	read -r name buffer p c ordering extra <<<"$spec"
	step="throughput/$name"
	budget "$step" 40 || continue
	f="throughput/$name.json"
	envs=()
	[ "${name%-direct}" != "$name" ] && envs=(env TIERFLOW_CUDA_GRAPHS=0)
	# shellcheck disable=SC2086 # extra is zero or more flags
	train "$step" "$f" "$TLIMIT" "tp-$p" "${envs[@]}" "${RR[@]}" --engine cuda --buffer "$buffer" --p "$p" --c "$c" --ordering "$ordering" \
		--epochs 1 --eval none --seed 1 "${SHAPE[@]}" $extra
	if [ "$RC" = 0 ]; then
		j="$OUT/$f"
		eps=$(jnum "$j" edges_per_second)
		note="$(fmt '%.0f' "$eps") edges/s, stall $(fmt '%.2f' "$(jnum "$j" stall_seconds)") s"
		[ -n "${GEMM:-}" ] || GEMM=$(jstrval "$j" gemm)
		REASON="${REASON:+$REASON; }$note"
		TP_ROWS+=("$(printf '%-24s %6s %3s %3s %14s %9s %9s %10s %9s %10s %10s %10s %10s %6s' "$name" "$buffer" "$p" "$c" \
			"$(fmt '%.0f' "$eps")" "$(fmt '%.2f' "$(jnum "$j" epoch_seconds)")" "$(fmt '%.2f' "$(jnum "$j" stall_seconds)")" \
			"$(fmt '%.3f' "$(jnum "$j" transfer_seconds)")" "$(fmt '%.3f' "$(jnum "$j" hidden_transfer_seconds)")" \
			"$(fmt '%.1f' "$(jnum "$j" h2d_bytes)" 1e-6)" "$(fmt '%.1f' "$(jnum "$j" d2h_bytes)" 1e-6)" \
			"$(fmt '%.1f' "$(jnum "$j" pcie_rx_bytes)" 1e-6)" "$(fmt '%.1f' "$(jnum "$j" pcie_tx_bytes)" 1e-6)" \
			"$(fmt '%.0f' "$(jnum "$j" gpu_utilization)" 100)")")
		printf '%s\t%s\n' "$name" "$eps" >>"$OUT/throughput/.eps"
	else
		rm -f "$OUT/$f"
	fi
	record "$step" "$STATUS" "$REASON" "$SECS" "$f"
done

# One plot of its own: edges/s per shape, an SVG bar chart.
if [ -s "$OUT/throughput/.eps" ]; then
	awk -F'\t' -v title="edges/s per throughput shape ($([ "$GPU" = 1 ] && echo GPU || echo "emulated GPU: not a measurement"))" '
		{ n++; name[n] = $1; v[n] = $2 + 0; if (v[n] > hi) hi = v[n] }
		END {
			if (hi <= 0) hi = 1
			h = 40 + 28 * n
			printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"%d\" font-family=\"sans-serif\" font-size=\"13\">\n", h
			printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"22\" font-size=\"15\">%s</text>\n", title
			for (i = 1; i <= n; i++) {
				y = 36 + 28 * (i - 1); w = 420 * v[i] / hi
				printf "<text x=\"10\" y=\"%d\">%s</text><rect x=\"200\" y=\"%d\" width=\"%.1f\" height=\"20\" fill=\"#4c72b0\"/>", y + 15, name[i], y, w
				printf "<text x=\"%.1f\" y=\"%d\">%.0f</text>\n", 206 + w, y + 15, v[i]
			}
			print "</svg>"
		}' "$OUT/throughput/.eps" >"$OUT/throughput/edges-per-second.svg"
	rm -f "$OUT/throughput/.eps"
fi

# --- profile: the in-GPU chunk step again, two epochs, with the host's CPU
# profile (read it with go tool pprof where Go is: the bundle has none).
mkdir -p "$OUT/profile"
if budget profile/in-gpu 44; then
	train profile/in-gpu profile/in-gpu.json "$TLIMIT" tp-4 "${RR[@]}" --engine cuda --buffer gpu --p 4 --c 4 --ordering beta \
		--epochs 2 --eval none --seed 1 "${SHAPE[@]}" --cpuprofile "$OUT/profile/in-gpu.cpu.prof"
	[ "$RC" = 0 ] && REASON="${REASON:+$REASON; }$(fmt '%.0f' "$(jnum "$OUT/profile/in-gpu.json" edges_per_second last)") edges/s in epoch 2; profile in profile/in-gpu.cpu.prof"
	record profile/in-gpu "$STATUS" "$REASON" "$SECS" profile/in-gpu.json profile/in-gpu.cpu.prof
fi

if budget profile/host-beta 45; then
	train profile/host-beta profile/host-beta.json "$TLIMIT" tp-16 "${RR[@]}" --engine cuda --buffer host --p 16 --c 4 --ordering beta \
		--epochs 1 --eval none --seed 1 "${SHAPE[@]}" --cpuprofile "$OUT/profile/host-beta.cpu.prof"
	[ "$RC" = 0 ] && REASON="${REASON:+$REASON; }$(fmt '%.0f' "$(jnum "$OUT/profile/host-beta.json" edges_per_second last)") edges/s; profile in profile/host-beta.cpu.prof"
	record profile/host-beta "$STATUS" "$REASON" "$SECS" profile/host-beta.json profile/host-beta.cpu.prof
fi

# --- the chunk step's launches one kind at a time (BenchmarkChunkKernels
# of the cuda-tagged tests): each kind's GPU time per launch with the queue
# full, and the host's time to issue it.
if [ "$GPU" != 1 ]; then
	skip profile/kernels "no GPU: the emulator's kernel times mean nothing"
elif budget profile/kernels 47; then
	(cd "$HERE/tests/realrun/cuda" 2>/dev/null || cd "$OUT"
		execute "$OUT/profile/kernels.txt" "$OUT/logs/profile-kernels.stderr" 60 "$HERE/tests/cuda.test" -test.run '^$' -test.bench ChunkKernels -test.benchtime 300x
		echo "$RC $SECS" >"$OUT/profile/.rc")
	read -r RC SECS <"$OUT/profile/.rc"
	rm -f "$OUT/profile/.rc"
	if [ "$RC" = 0 ]; then
		record profile/kernels run "$(grep -o 'fp32/chunk-[0-9]* .*' "$OUT/profile/kernels.txt" | awk '{ for (i = 1; i <= NF; i++) if ($i == "edges/s") print "fp32 chunk: " $(i-1) " edges/s" }'; grep -o 'tf32/chunk-[0-9]* .*' "$OUT/profile/kernels.txt" | awk '{ for (i = 1; i <= NF; i++) if ($i == "edges/s") print "; tf32 chunk: " $(i-1) " edges/s" }')" "$SECS" profile/kernels.txt
	else
		record profile/kernels failed "$(failure "$OUT/logs/profile-kernels.stderr")" "$SECS" profile/kernels.txt
	fi
fi

# --- every score function's chunk on the GPU (BenchmarkChunkModels of the
# cuda-tagged tests: DistMult, ComplEx, TransE L1/L2, RotatE, linear+cos,
# affine+dot at d = 100, chunks of 1,000 edges and 1,000 negatives, FP32).
if [ "$GPU" != 1 ]; then
	skip profile/models "no GPU: the emulator's kernel times mean nothing"
elif budget profile/models 40; then
	(cd "$HERE/tests/realrun/cuda" 2>/dev/null || cd "$OUT"
		execute "$OUT/profile/models.txt" "$OUT/logs/profile-models.stderr" 60 "$HERE/tests/cuda.test" -test.run '^$' -test.bench ChunkModels -test.benchtime 100x
		echo "$RC $SECS" >"$OUT/profile/.rc")
	read -r RC SECS <"$OUT/profile/.rc"
	rm -f "$OUT/profile/.rc"
	if [ "$RC" = 0 ]; then
		record profile/models run "$(grep -o 'ChunkModels/[^ ]* .*' "$OUT/profile/models.txt" | awk '{ for (i = 1; i <= NF; i++) if ($i == "edges/s") printf "%s%s %s edges/s", sep, $1, $(i-1); sep = "; " }')" "$SECS" profile/models.txt
	else
		record profile/models failed "$(failure "$OUT/logs/profile-models.stderr")" "$SECS" profile/models.txt
	fi
fi

# --- quality: the same graph and seeds on both engines under both
# duplicate-row rules (and the CUDA engine's default rule in FP32). On a
# GPU the graph is the WN18-style WordNet KG the bundle carries (wn18/,
# written by make gpu-bundle: a real KG, where the MRR says something),
# 10 epochs, seeds 1-3 for the run-to-run spread, the CPU engine's runs in
# parallel (one worker each) before the CUDA engine's; without one (or
# without wn18/) a small generated graph, one seed.
WN="$HERE/wn18"
if [ "$GPU" = 1 ] && [ -s "$WN/train.tsv" ]; then
	QSHAPE=(--edges "$WN/train.tsv" --valid "$WN/valid.tsv" --test "$WN/test.tsv" --epochs 10)
	QDESC="WN18-style WordNet KG (wn18/), 10 epochs, realrun's defaults"
	QSEEDS="1 2 3"
	QLIMIT=90
elif [ "$GPU" = 1 ]; then
	QSHAPE=(--dataset fb15k --scale 1 --dim 32 --epochs 5 --p 2 --c 2)
	QDESC="${QSHAPE[*]} (no wn18/ in the bundle)"
	QSEEDS=1
	QLIMIT=120
else
	QSHAPE=(--dataset fb15k --scale 0.05 --dim 16 --epochs 3 --p 2 --c 2)
	QDESC="${QSHAPE[*]}"
	QSEEDS=1
	QLIMIT=60
fi
declare -A MRR=() QSECS=()
# qrecord STEP NAME V OUTPUT: one quality run's note and summary entries.
qrecord() {
	local step=$1 name=$2 v=$3 f=$4 got secs
	if [ "$RC" = 0 ]; then
		got=$(jnum "$OUT/$f" mrr last)
		secs=$(grep -o '"epoch_seconds": *[0-9.eE+-]*' "$OUT/$f" | sed 's/.*: *//' | awk '{ s += $1 } END { printf "%.2f", s }')
		MRR[$v]="${MRR[$v]:-}${MRR[$v]:+ }$got"
		QSECS[$v]="${QSECS[$v]:-}${QSECS[$v]:+ }$secs"
		REASON="${REASON:+$REASON; }MRR $(fmt '%.4f' "$got"), $secs s of epochs"
		g=$(jstrval "$OUT/$f" gemm)
		[ -n "$g" ] && [ "${v#cpu}" = "$v" ] && REASON="$REASON; GEMMs: $g"
	else
		rm -f "$OUT/$f"
	fi
	record "$step" "$STATUS" "$REASON" "$SECS" "$f"
}
qname() { if [ "$QSEEDS" = 1 ]; then echo "$1"; else echo "$1-s$2"; fi; }
# The CPU engine's runs, all at once (each one worker; the machine has the
# cores): started in the background, recorded after the CUDA engine's.
CPUQ=()
if budget quality/cpu 52; then
	for seed in $QSEEDS; do
		for rule in each sum; do
			v=cpu-$rule
			n=$(qname "$v" "$seed")
			CPUQ+=("$v $seed $n")
			(
				rm -rf "$WORK/q-$n"
				mkdir -p "$WORK"
				t0=$(now)
				timeout --kill-after=10 "$QLIMIT" "${RRCPU[@]}" --engine cpu --duplicates "$rule" --eval end --seed "$seed" --workers 1 "${QSHAPE[@]}" \
					--workdir "$WORK/q-$n" --progress none --json >"$OUT/quality/$n.json" 2>"$OUT/logs/quality-$n.stderr"
				echo "$? $(since "$t0")" >"$OUT/quality/.$n.rc"
				rm -rf "$WORK/q-$n"
			) &
		done
	done
	wait
fi
for spec in "${CPUQ[@]}"; do
	read -r v seed n <<<"$spec"
	read -r RC SECS <"$OUT/quality/.$n.rc" 2>/dev/null || { RC=1 SECS=0; }
	rm -f "$OUT/quality/.$n.rc"
	if [ "$RC" = 0 ]; then STATUS=run REASON=""; else STATUS=failed REASON=$(failure "$OUT/logs/quality-$n.stderr"); fi
	qrecord "quality/$n" "$n" "$v" "quality/$n.json"
done
for seed in $QSEEDS; do
	# cuda-sum-more: the sum rule for 20% more epochs (12 on a GPU), about
	# the each rule's training time: which rule learns more per second.
	for v in cuda-each cuda-sum cuda-sum-more cuda-each-fp32; do
		n=$(qname "$v" "$seed")
		step="quality/$n"
		budget "$step" 61 || continue
		post=()
		case $v in
		cuda-each) cmd=("${RR[@]}" --engine cuda --duplicates each) ;;
		cuda-sum) cmd=("${RR[@]}" --engine cuda --duplicates sum) ;;
		cuda-sum-more)
			cmd=("${RR[@]}" --engine cuda --duplicates sum)
			post=(--epochs "$(awk -v q="${QSHAPE[*]}" 'BEGIN { n = split(q, a, " "); for (i = 1; i < n; i++) if (a[i] == "--epochs") e = a[i+1]; printf "%d", e * 1.2 + 0.5 }')")
			;;
		cuda-each-fp32) cmd=("${RR[@]}" --engine cuda --duplicates each --fp32) ;;
		esac
		train "$step" "quality/$n.json" "$QLIMIT" quality "${cmd[@]}" --eval end --seed "$seed" --workers 1 "${QSHAPE[@]}" "${post[@]}"
		qrecord "$step" "$n" "$v" "quality/$n.json"
	done
done

# --- the simulator against the cuda engine where the order decides: a
# data-bound shape (Twitter-shaped, Dot, d=100, batches of 50,000 in chunks
# of 1,000 sharing 1,000 negatives, p=16) on the disk held to p3.2xlarge's
# EBS volume (--emulate-disk, a kernel cgroup limit) where the kernel
# allows it, else, on the machine's own disk, with 250 negatives (a quarter
# of the compute, so that the I/O still decides). First realrun calibrate
# at that shape (both buffer modes, buckets of the run's mean size), then
# --compare-sim --device on it for BETA, Hilbert, Hilbert-symmetric, COVER
# and tierflow's own order at c=4 and Legend at c=3, two interleaved
# repeats, each buffer mode. Then Marius Figures 10-11's orderings (BETA,
# Hilbert-symmetric, Hilbert) at Figure 10's shape (Freebase86m-shaped,
# ComplEx, d=100, p=32, c=8) on the same disk, --buffer gpu.
CAL=calibrate/cal.yaml
if [ "$GPU" = 1 ]; then
	DSHAPE=(--dataset twitter --scale "${GPU_BUNDLE_DATABOUND_SCALE:-0.002}" --model dot --dim 100 --batch 50000 --chunk 1000 --negatives 1000 --p 16)
	MSHAPE=(--dataset freebase86m --scale "${GPU_BUNDLE_MARIUS_SCALE:-0.01}" --model complex --dim 100 --batch 50000 --chunk 1000 --negatives 1000 --p 32)
	MC=8
	CLIMIT=120
else
	DSHAPE=("${SHAPE[@]}" --p 4)
	MSHAPE=(--dataset fb15k --scale 0.05 --model complex --dim 16 --batch 1000 --chunk 16 --negatives 16 --p 4)
	MC=3
	CLIMIT=60
fi
HOLD=(--emulate-disk p3.2xlarge)
HOLDNOTE="disk held to p3.2xlarge's EBS volume (--emulate-disk p3.2xlarge)"
# calibrate_at STEP OUTPUT-YAML SHAPE...: realrun calibrate at a shape,
# the disk held; sets RC.
calibrate_at() {
	local step=$1 yaml=$2
	shift 2
	local json="${yaml%.yaml}.json"
	mkdir -p "$OUT/calibrate/scratch"
	execute "$OUT/$json" "$OUT/logs/${step//\//-}.stderr" 180 \
		"${RR[@]}" calibrate --engine cuda "$@" --out "$OUT/$yaml" --dir "$OUT/calibrate/scratch" --json
	rm -rf "$OUT/calibrate/scratch"
	if [ "$RC" = 0 ]; then
		gpuname=$(grep -A2 '"gpu": {' "$OUT/$json" | grep -m1 -o '"name": *"[^"]*"' | sed 's/.*: *//; s/"//g')
		if [ -n "$gpuname" ]; then
			note="$gpuname: H2D $(fmt '%.1f' "$(jnum "$OUT/$json" h2d_bytes_per_s)" 1e-9) GB/s, D2H $(fmt '%.1f' "$(jnum "$OUT/$json" d2h_bytes_per_s)" 1e-9) GB/s, $(fmt '%.0f' "$(jnum "$OUT/$json" edges_per_second)") edges/s (--buffer gpu), $(fmt '%.0f' "$(jnum "$OUT/$json" host_edges_per_second)") (--buffer host) in buckets of $(jnum "$OUT/$json" bucket_edges); disk read $(fmt '%.0f' "$(jnum "$OUT/$json" read_bytes_per_s)" 1e-6) MB/s"
		else
			note="no GPU in the profile: $(grep -m1 -o '"no_gpu": *"[^"]*"' "$OUT/$json" | sed 's/^"no_gpu": *//')"
		fi
		record "$step" "$RUN" "${EMU:+$EMU; }${HOLDNOTE}; $note" "$SECS" "$yaml" "$json"
	else
		rm -f "$OUT/$json"
		record "$step" failed "$(failure "$OUT/logs/${step//\//-}.stderr")" "$SECS"
	fi
}
if budget calibrate/databound 66; then
	calibrate_at calibrate/databound "$CAL" "${DSHAPE[@]}" "${HOLD[@]}"
	if [ "$RC" != 0 ] && grep -q -i -e cgroup -e "io.max" -e blkio -e "disk limit" -e "emulate-disk" "$OUT/logs/calibrate-databound.stderr"; then
		HOLD=()
		HOLDNOTE="disk not held ($(oneline "$OUT/logs/calibrate-databound.stderr" 1 | cut -c1-160)): the machine's own disk, 250 negatives"
		[ "$GPU" = 1 ] && DSHAPE=(--dataset twitter --scale "${GPU_BUNDLE_DATABOUND_SCALE:-0.002}" --model dot --dim 100 --batch 50000 --chunk 250 --negatives 250 --p 16)
		calibrate_at calibrate/databound "$CAL" "${DSHAPE[@]}"
	fi
fi

# compare STEP SHARE BUFFER C ORDERINGS CAL SHAPE...: --compare-sim on
# the profile CAL, two interleaved repeats, done by SHARE percent of the
# budget; the note gives every ordering's error and whether the bytes are
# the Plan's.
compare() {
	local step=$1 share=$2 buffer=$3 c=$4 ords=$5 cal=$6
	shift 6
	budget "$step" "$share" || return
	if [ ! -s "$OUT/$cal" ]; then
		skip "$step" "no calibrated profile ($cal): its calibrate step did not write one"
		return
	fi
	local f="compare-sim/${step#*/}.json" plot="compare-sim/${step#*/}.png" err="$OUT/logs/${step//\//-}.stderr"
	rm -rf "$WORK/run"
	mkdir -p "$WORK"
	execute "$OUT/$f" "$err" "$CLIMIT" "${RR[@]}" --compare-sim --engine cuda --buffer "$buffer" --device "$OUT/$cal" \
		--orderings "$ords" --c "$c" --repeats 2 --epochs 1 --eval none --seed 1 "$@" "${HOLD[@]}" \
		--workdir "$WORK/run" --progress none --json --plot "$OUT/$plot"
	rm -rf "$WORK/run"
	if [ "$RC" = 0 ]; then
		# Per ordering and repeat: epoch seconds measured and predicted,
		# the error, and whether the loads, swaps, writes and bytes match
		# the Plan's.
		note=$(awk '
			function val(l) { sub(/^[^:]*: */, "", l); gsub(/[",]/, "", l); return l }
			/"results": \[/ { on = 1 }
			!on { next }
			/"ordering":/ && ord == "" { ord = val($0) }
			/"measured": \{/ { sec = "m" }
			/"predicted": \{/ { sec = "p" }
			/"relative_error": \{/ { sec = "e" }
			/"epoch_seconds":/ && sec != "" { v[sec] = val($0); sec = "" }
			/"counts_match":/ {
				printf "%s%s %.2f s measured, %.2f predicted (%+.0f%%)%s", sep, ord, v["m"], v["p"], 100 * v["e"], val($0) == "true" ? "" : ", COUNTS DIFFER from the Plan"
				sep = "; "; ord = ""; split("", v)
			}' "$OUT/$f")
		if grep -q '"counts_match": *false' "$OUT/$f"; then
			record "$step" failed "measured loads, swaps, writes or bytes differ from the Plan's: $note" "$SECS" "$f" "$plot"
		else
			record "$step" "$RUN" "${EMU:+$EMU; }${HOLDNOTE}; $note" "$SECS" "$f" "$plot"
		fi
	else
		rm -f "$OUT/$f"
		record "$step" failed "$(failure "$err")" "$SECS"
	fi
}
compare compare-sim-databound/gpu-c4 74 gpu 4 beta,hilbert,hilbert-symmetric,cover,tierflow "$CAL" "${DSHAPE[@]}"
compare compare-sim-databound/gpu-legend 77 gpu 3 legend "$CAL" "${DSHAPE[@]}"
compare compare-sim-databound/host-c4 84 host 4 beta,hilbert,hilbert-symmetric,cover,tierflow "$CAL" "${DSHAPE[@]}"
compare compare-sim-databound/host-legend 86 host 3 legend "$CAL" "${DSHAPE[@]}"
# Marius Figure 10 keeps p3.2xlarge's proportion: there BETA at d=100
# moves its bytes in 2.01x its compute (REPRODUCE, "Marius Figures 10-11
# for real"). The GPU calibrated at the shape gives the compute (a mean
# bucket's time at the calibrated rate, times the p^2 buckets); BETA's
# bytes at p=32, c=8 are 86 partition loads and 86 writes (simulate --p 32
# --c 8 --orderings beta); the disk is held to the rate at which those take
# 2.01x the compute, or left alone where that is more than 40% of the read
# rate it measured (reads and writes at once share it: on the H100
# machine's virtual disk a hold of 918 MB/s each way, 43%, ran at 0.67x).
MCAL=calibrate/marius.yaml
if budget calibrate/marius 89; then
	HOLDSAVE=("${HOLD[@]}") NOTESAVE=$HOLDNOTE
	HOLD=() HOLDNOTE="disk as measured (the hold follows from this calibration)"
	calibrate_at calibrate/marius "$MCAL" "${MSHAPE[@]}"
	HOLD=() HOLDNOTE="the machine's own disk"
	mj="$OUT/${MCAL%.yaml}.json"
	if [ "$RC" = 0 ] && [ "$GPU" = 1 ]; then
		rate=$(awk -v eps="$(jnum "$mj" edges_per_second)" -v b="$(jnum "$mj" bucket_edges)" -v rows="$(grep -m1 -o 'rows=[0-9]*' "$mj" | cut -d= -f2)" \
			-v disk="$(jnum "$mj" read_bytes_per_s)" 'BEGIN {
				compute = b * 32 * 32 / eps; bytes = 86 * rows * 100 * 8
				r = bytes / (2.01 * compute)
				if (r < 0.4 * disk) printf "%.0f", r / 1e6
			}')
		if [ -n "$rate" ] && [ "${#HOLDSAVE[@]}" -gt 0 ]; then
			HOLD=(--disk-read "${rate}MB/s" --disk-write "${rate}MB/s")
			HOLDNOTE="disk held to ${rate} MB/s each way: BETA's I/O 2.01x its calibrated compute, p3.2xlarge's proportion"
		elif [ -z "$rate" ]; then
			HOLDNOTE="the machine's own disk: BETA's I/O in 2.01x its compute would need a disk faster than this one"
		else
			HOLDNOTE="the machine's own disk (no kernel disk limit here: $NOTESAVE)"
		fi
	fi
fi
compare compare-sim-databound/marius-fig10 99 gpu "$MC" beta,hilbert-symmetric,hilbert "$MCAL" "${MSHAPE[@]}"
rm -rf "$WORK"

# ---------------------------------------------------------------- summary

{
	printf '[\n'
	sed '$!s/$/,/; s/^/  /' "$STEPS"
	printf ']\n'
} >"$OUT/steps.json"

{
	echo "gpu-bundle run on $(hostname 2>/dev/null) ($(nproc) CPUs), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - START)) s; mode: $([ "$GPU" = 1 ] && echo GPU || echo "emulated ($NOGPU)")"
	echo
	printf '%-34s %-24s %8s  %s\n' step status seconds "reason / note"
	cat "$SUMLINES"
	if [ ${#TP_ROWS[@]} -gt 0 ]; then
		echo
		echo "throughput (${SHAPE[*]}, one epoch; GEMMs: ${GEMM:-not reported})"
		printf '%-24s %6s %3s %3s %14s %9s %9s %10s %9s %10s %10s %10s %10s %6s\n' shape buffer p c edges/s epoch_s stall_s transfer_s hidden_s h2d_MB d2h_MB pcie_rx_MB pcie_tx_MB util%
		printf '%s\n' "${TP_ROWS[@]}"
	fi
	if [ ${#MRR[@]} -gt 0 ]; then
		echo
		echo "quality ($QDESC; seeds $QSEEDS): final MRR min / median / max over seeds; the epochs' seconds, median"
		for k in cpu-each cpu-sum cuda-each cuda-sum cuda-sum-more cuda-each-fp32; do
			[ -n "${MRR[$k]:-}" ] || continue
			secs=$(printf '%s\n' ${QSECS[$k]} | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
			printf '%s\n' ${MRR[$k]} | sort -g | awk -v k="$k" -v s="$secs" '{ v[NR] = $1 } END { printf "  %-16s %.4f / %.4f / %.4f  (%d runs)  %s s\n", k, v[1], v[int((NR + 1) / 2)], v[NR], NR, s }'
		done
	fi
	echo
	echo "steps: $(grep -c '"status": "run' "$OUT/steps.json") run, $(grep -c '"status": "skipped"' "$OUT/steps.json") skipped, $(grep -c '"status": "failed"' "$OUT/steps.json") failed; details in $OUT/steps.json, logs in $OUT/logs"
} >"$OUT/summary.txt"
rm -f "$STEPS" "$SUMLINES"
echo
cat "$OUT/summary.txt"
exit "$FAILED"
