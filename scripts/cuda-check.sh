#!/usr/bin/env bash
# cuda-check.sh is CI's check of the CUDA engine on a machine without a GPU:
# it installs the CUDA build dependencies (with ptxas unless WITH_PTXAS=0), recompiles every kernel to PTX
# and fails if the committed PTX is stale, assembles the PTX for sm_90 when
# ptxas is present, builds and vets with -tags cuda, runs the cuda-tagged
# tests (they skip without a GPU), and checks that the cuda binary exits 2
# with one line when there is no usable GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
start=$(date +%s)

WITH_PTXAS=${WITH_PTXAS:-1} ./scripts/install-cuda.sh
make -s bin/nvrtcc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for k in realrun/cuda/kernels/*.cu; do
	ptx="${k%.cu}.ptx"
	./bin/nvrtcc -arch "${CUDA_ARCH:-compute_70}" -o "$tmp/$(basename "$ptx")" "$k"
	if ! cmp -s "$tmp/$(basename "$ptx")" "$ptx"; then
		echo "cuda-check: $ptx is stale; run make ptx and commit it" >&2
		exit 1
	fi
	if command -v ptxas >/dev/null; then
		ptxas -arch=sm_90 -o "$tmp/$(basename "$k" .cu).cubin" "$ptx"
		echo "cuda-check: ptxas sm_90 $ptx ok"
	else
		echo "cuda-check: ptxas not installed (WITH_PTXAS=1 ./scripts/install-cuda.sh adds it); PTX compiled with NVRTC only"
	fi
done

$GO build -tags cuda -o "$tmp/realrun" ./cmd/realrun
$GO vet -tags cuda ./...
$GO test -count=1 -tags cuda ./realrun/cuda/... ./realrun/telemetry/...

# Without a usable GPU the cuda binary must exit 2 with exactly one line.
# (--p 0 is a usage error, so on a GPU machine it also stops at once.)
if "$tmp/realrun" --engine cuda --p 0 >"$tmp/out" 2>"$tmp/err"; then rc=0; else rc=$?; fi
lines=$(cat "$tmp/out" "$tmp/err" | wc -l)
if [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
	echo "cuda-check: the cuda binary exited $rc with $lines lines, want 2 and 1:" >&2
	cat "$tmp/out" "$tmp/err" >&2
	exit 1
fi
if grep -q "no usable CUDA GPU" "$tmp/err"; then
	echo "cuda-check: no-GPU exit ok: $(cat "$tmp/err")"
else
	echo "cuda-check: a GPU is present (the binary got past the probe): $(cat "$tmp/err")"
fi
echo "cuda-check: ok in $(($(date +%s) - start)) s"
